/// The text rules a configuration value must follow to name something: a well-known bus name, a web origin, a
/// group name, an http(s) URL. Pure checks on the text; `apply` (ConfigurationParser+Values) says what is wrong.
extension ConfigurationParser {
    /// A well-known bus name as the D-Bus specification has it: elements of `[A-Za-z0-9_-]`, none empty or
    /// starting with a digit, at least two, at most 255 characters in all.
    public static func isBusName(_ text: String) -> Bool {
        let elements = text.split(separator: ".", omittingEmptySubsequences: false)
        guard text.utf8.count <= 255, elements.count >= 2 else { return false }
        return elements.allSatisfy { element in
            guard let first = element.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
                return false
            }
            return element.utf8.allSatisfy { byte in
                byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                    || (byte < 128 && Character(UnicodeScalar(byte)).isLetter)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            }
        }
    }

    /// An origin as a browser sends it in `Origin`: `http` or `https`, `://`, a lowercase host (a name, an IPv4
    /// address or a bracketed IPv6 address) and an optional port; nothing else, so no wildcard ever matches.
    public static func isWebOrigin(_ text: String) -> Bool {
        let rest: Substring
        if text.hasPrefix("http://") {
            rest = text.dropFirst(7)
        } else if text.hasPrefix("https://") {
            rest = text.dropFirst(8)
        } else {
            return false
        }
        guard !rest.isEmpty, rest.count <= 255 else { return false }
        var host = rest
        if let colon = rest.lastIndex(of: ":"), !rest[colon...].contains("]") {
            let port = rest[rest.index(after: colon)...]
            guard let number = Int(port), number > 0, number < 65536, port.first != "0",
                port.allSatisfy({ $0.isASCII && $0.isNumber })
            else { return false }
            host = rest[..<colon]
        }
        guard !host.isEmpty else { return false }
        if host.first == "[" {
            guard host.last == "]", host.count > 2 else { return false }
            return host.dropFirst().dropLast().allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        }
        return host.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "." }
    }

    /// The portable group names of POSIX and useradd, plus numeric ids: `[A-Za-z0-9_][A-Za-z0-9_.-]*$?`.
    static func isGroupName(_ name: String) -> Bool {
        var scalars = Array(name.unicodeScalars)
        if scalars.last == "$" { scalars.removeLast() }
        guard let first = scalars.first, isASCIIAlphanumeric(first) || first == "_" else { return false }
        return scalars.allSatisfy { isASCIIAlphanumeric($0) || $0 == "_" || $0 == "." || $0 == "-" }
    }

    static func isASCIIAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }

    /// An absolute `http://` or `https://` URL with a host and, if any, a numeric port; no blanks or controls.
    static func isHTTPURL(_ value: String) -> Bool {
        let lowered = value.lowercased()
        let schemeLength: Int
        if lowered.hasPrefix("http://") {
            schemeLength = 7
        } else if lowered.hasPrefix("https://") {
            schemeLength = 8
        } else {
            return false
        }
        guard !value.unicodeScalars.contains(where: { isBlank($0) || $0.properties.generalCategory == .control })
        else { return false }

        let rest = value.unicodeScalars.dropFirst(schemeLength)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        // Credentials before `@` are not the host.
        let hostAndPort = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? authority[...]
        var host = Substring(hostAndPort)
        var port: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            let after = host[host.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return false }
                port = after.dropFirst()
            }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            port = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        guard !host.isEmpty else { return false }
        if let port {
            guard let number = Int(port), port.allSatisfy(\.isASCII), (1...65535).contains(number),
                !port.hasPrefix("+")
            else { return false }
        }
        return true
    }
}
