public import FlagsCore

/// Finds where the systemd unit that runs a configuration loads the API token credential from, the way systemd
/// reads it: the unit file (the first of the unit directories that has it), then its drop-ins (`*.conf` in
/// `UNIT.d/`, and for an instance in the template's too), in file-name order, the last
/// `LoadCredential=pushwoosh-api-token:PATH` winning and an empty `LoadCredential=` clearing it.
///
/// `/etc/pwflagsd/pwflagsd.conf` (the default) is run by `pwflagsd.service`, `/etc/pwflagsd/NAME.conf` by
/// `pwflagsd@NAME.service`; any other configuration by no unit. With no unit file installed, the path is the one
/// the shipped unit names.
public struct UnitCredentialLookup: Sendable {
    /// systemd's system unit directories, most important first.
    static let unitDirectories = [
        "/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system", "/usr/lib/systemd/system",
        "/lib/systemd/system",
    ]

    /// Prefixed to every path read (tests point it at a directory tree); empty on a real system.
    var root: String

    public init(root: String = "") {
        self.root = root
    }

    /// The unit and its credential's source for the configuration at `configPath` (nil: the default path).
    public func credential(forConfigPath configPath: String?) -> UnitCredential? {
        guard let unit = Self.unit(forConfigPath: configPath ?? Configuration.defaultConfigPath) else { return nil }
        var path: String? = unit.shippedPath
        var foundUnit = false
        for name in [unit.name, unit.template].compactMap({ $0 }) where !foundUnit {
            for directory in Self.unitDirectories {
                guard let text = readText(directory + "/" + name) else { continue }
                Self.apply(text, instance: unit.instance, to: &path)
                foundUnit = true
                break
            }
        }
        for dropIn in dropIns(of: unit) {
            guard let text = readText(dropIn) else { continue }
            Self.apply(text, instance: unit.instance, to: &path)
        }
        return path.map { UnitCredential(unit: unit.name, path: $0) }
    }

    /// The unit that runs a configuration file, its template and instance, and the token file it ships with.
    static func unit(forConfigPath configPath: String) -> (
        name: String, template: String?, instance: String, shippedPath: String
    )? {
        let directory = "/etc/pwflagsd/"
        guard configPath.hasPrefix(directory), configPath.hasSuffix(".conf") else { return nil }
        let instance = String(configPath.dropFirst(directory.count).dropLast(".conf".count))
        guard !instance.isEmpty, !instance.contains("/") else { return nil }
        if configPath == Configuration.defaultConfigPath {
            return ("pwflagsd.service", nil, "", directory + "api-token")
        }
        return ("pwflagsd@\(instance).service", "pwflagsd@.service", instance, directory + instance + ".api-token")
    }

    /// Applies the `LoadCredential=` lines of the `[Service]` section of one unit file or drop-in.
    static func apply(_ text: String, instance: String, to path: inout String?) {
        var inService = false
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.drop { $0 == " " || $0 == "\t" }
            if line.hasPrefix("[") {
                inService = line.hasPrefix("[Service]")
                continue
            }
            guard inService, let equals = line.firstIndex(of: "="),
                line[..<equals].trimmingSuffix(" ") == "LoadCredential"
            else { continue }
            let value = line[line.index(after: equals)...].drop { $0 == " " }.trimmingSuffix(" ")
            if value.isEmpty {
                path = nil
                continue
            }
            let prefix = Configuration.apiTokenCredentialName + ":"
            guard value.hasPrefix(prefix) else { continue }
            path = expand(String(value.dropFirst(prefix.count)), instance: instance)
        }
    }

    /// Replaces the specifiers a credential path may hold: `%i` and `%I` (the instance), `%%`.
    static func expand(_ value: String, instance: String) -> String {
        var result = ""
        var specifier = false
        for character in value {
            if specifier {
                switch character {
                case "i", "I": result += instance
                case "%": result.append("%")
                default: result += "%" + String(character)
                }
                specifier = false
            } else if character == "%" {
                specifier = true
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// The drop-in files of the unit (and of its template), in the order systemd applies them: by file name, a
    /// name in a more important directory hiding the same name in the others.
    private func dropIns(
        of unit: (name: String, template: String?, instance: String, shippedPath: String)
    ) -> [String] {
        var byName: [String: String] = [:]
        for name in [unit.template, unit.name].compactMap({ $0 }) {
            for directory in Self.unitDirectories {
                let dropInDirectory = directory + "/" + name + ".d"
                let files = (try? ConfigurationLoader.dropInFiles(in: root + dropInDirectory).get()) ?? []
                for file in files where byName[file] == nil {
                    byName[file] = dropInDirectory + "/" + file
                }
            }
        }
        return byName.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.compactMap { byName[$0] }
    }

    private func readText(_ path: String) -> String? {
        guard case .success(let text) = ConfigurationLoader.readText(atPath: root + path) else { return nil }
        return text
    }
}

extension Substring {
    fileprivate func trimmingSuffix(_ character: Character) -> Substring {
        var result = self
        while result.last == character { result.removeLast() }
        return result
    }
}
