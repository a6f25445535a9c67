import FlagsCore
import FlagsProtocol
import Foundation
import TestSupport
import Testing

/// The IDL embedded in the daemon is the file the package ships, and names every method and error it serves.
@Suite(.hangLimit) struct VarlinkInterfaceTests {
    private static let shipped = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("systemd/io.github.pwflagsd.Flags.varlink")

    @Test func theEmbeddedDescriptionIsTheShippedFile() throws {
        #expect(try String(contentsOf: Self.shipped, encoding: .utf8) == VarlinkInterface.description)
    }

    @Test func theDescriptionDeclaresItsInterfaceFirst() {
        let declarations = VarlinkInterface.description.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(declarations.first == "interface io.github.pwflagsd.Flags")
        let service = VarlinkInterface.serviceDescription.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(service.first == "interface org.varlink.service")
    }

    @Test func everyMethodIsDeclaredAndCarriesOutALineMethod() throws {
        let declared = VarlinkInterface.description.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("method ") else { return nil }
            return String(line.dropFirst(7).prefix { $0 != "(" })
        }
        #expect(declared == VarlinkInterface.Method.allCases.map(\.rawValue))
        // Every line method exists and takes the parameters the IDL names.
        for method in VarlinkInterface.Method.allCases {
            let params: [String: JSONValue] = ["key": "k", "userId": "", "state": "background"]
            #expect(throws: Never.self, "\(method)") { try Call(method: method.lineMethod, params: params) }
        }
    }

    @Test func everyErrorTheDaemonSendsIsDeclared() {
        let errors: [VarlinkError] = [
            .permissionDenied("m"), .invalidMessage("r"), .messageTooLong(limit: 1),
            VarlinkError(.refreshFailed(status: 0, reason: "r"), method: "m"),
            VarlinkError(.tooManyStateChanges(retryAfter: 1), method: "m"),
            VarlinkError(.notDurable("r"), method: "m"),
            VarlinkError(.tooManySubscriptions(limit: 1), method: "m"),
            VarlinkError(.tooManyListenKeys(limit: 1, held: 0, requested: 2), method: "m"),
        ]
        for error in errors {
            let short = error.name.dropFirst(VarlinkInterface.name.count + 1)
            let declaration = VarlinkInterface.description.split(separator: "\n").first {
                $0.hasPrefix("error \(short) (")
            }
            #expect(declaration != nil, "\(error.name)")
            guard let declaration else { continue }
            for parameter in error.parameters.keys {
                #expect(declaration.contains("\(parameter): "), "\(error.name) \(parameter)")
            }
        }
        for name in ["InterfaceNotFound", "MethodNotFound", "InvalidParameter", "ExpectedMore"] {
            #expect(VarlinkInterface.serviceDescription.contains("error \(name) ("))
        }
    }

    @Test func getInfoListsBothInterfaces() {
        let info = VarlinkInterface.info(version: PWFlagsVersion.current)
        #expect(info["interfaces"] == ["org.varlink.service", "io.github.pwflagsd.Flags"])
        #expect(info["version"]?.stringValue == PWFlagsVersion.current)
        #expect(VarlinkInterface.description(of: "org.example.None") == nil)
    }
}
