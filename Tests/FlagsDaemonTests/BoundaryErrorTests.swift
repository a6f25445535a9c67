import FlagsCore
import Foundation
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// The daemon's boundary errors: each says what kind of failure it is (`code`), in one line for the operator
/// (`message`, which is also its `description`), and which system call failed when one did (`cause`).
@Suite(.hangLimit) struct BoundaryErrorTests {
    /// A fresh directory, removed at the end of the test.
    final class Scratch {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pwf-errors-\(UUID().uuidString)")
            .path

        init() throws {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }

        func write(_ name: String, _ bytes: [UInt8]) throws -> String {
            let file = path + "/" + name
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            return file
        }
    }

    // MARK: The local flags file

    @Test func aMissingFlagsFileIsUnreadableWithItsErrno() throws {
        let scratch = try Scratch()
        let path = scratch.path + "/absent.json"
        let error = try #require(FlagsFile.read(path).failure)
        #expect(error == .unreadable(path: path, cause: SystemError("open(\(path))", errno: ENOENT)))
        #expect(error.code == .unreadable)
        #expect(error.cause?.errno == ENOENT)
        #expect(error.reason == "cannot read \(path): No such file or directory")
    }

    @Test func aFlagsFileOverTheBoundIsUnreadableWithoutACause() throws {
        let scratch = try Scratch()
        let path = try scratch.write("huge.json", [UInt8](repeating: 0x20, count: FlagsFile.maximumFileBytes + 1))
        let error = try #require(FlagsFile.read(path).failure)
        #expect(error == .tooLarge(path: path, limit: FlagsFile.maximumFileBytes))
        #expect(error.code == .unreadable)
        #expect(error.cause == nil)
        #expect(error.reason == "\(path) is larger than 8388608 bytes")
    }

    @Test(arguments: [
        ("{\"response\":", "is not valid JSON: "),
        ("[1, 2]", "is not a getFeatureFlags response: "),
    ])
    func aFlagsFileThatHoldsNoFlagsIsInvalid(text: String, says: String) throws {
        let scratch = try Scratch()
        let path = try scratch.write("bad.json", Array(text.utf8))
        let error = try #require(FlagsFile.read(path).failure)
        #expect(error.code == .invalid)
        #expect(error.cause == nil)
        #expect(error.reason.hasPrefix("\(path) \(says)"), "\(error)")
    }

    // MARK: OFREP's listener and token

    @Test func anEmptyOFREPTokenFileGivesNoToken() throws {
        let scratch = try Scratch()
        var configuration = Configuration()
        configuration.ofrepTokenFile = try scratch.write("token", Array(" \n".utf8))
        let error = try #require(
            Self.failure { () throws(OFREPListener.Failure) in
                _ = try OFREPListener.token(configuration)
            })
        #expect(error == .tokenEmpty(path: configuration.ofrepTokenFile ?? ""))
        #expect(error.code == .tokenUnavailable)
        #expect(error.description == "the OFREP TokenFile \(configuration.ofrepTokenFile ?? "") is empty")
    }

    @Test func anUnreadableOFREPTokenFileSaysWhy() throws {
        let scratch = try Scratch()
        var configuration = Configuration()
        let path = scratch.path + "/absent-token"
        configuration.ofrepTokenFile = path
        let error = try #require(
            Self.failure { () throws(OFREPListener.Failure) in
                _ = try OFREPListener.token(configuration)
            })
        #expect(error.code == .tokenUnavailable)
        #expect(error.cause?.errno == ENOENT)
        #expect(error.message == "cannot read the OFREP TokenFile \(path): No such file or directory")
    }

    @Test func anOFREPSocketPathHoldingAFileIsNeverTaken() throws {
        let scratch = try Scratch()
        let path = try scratch.write("ofrep.sock", Array("precious".utf8))
        var configuration = Configuration()
        configuration.ofrepListenAddress = .unix(path: path)
        let error = try #require(
            Self.failure { () throws(OFREPListener.Failure) in
                _ = try OFREPListener.open(configuration, activated: [])
            })
        #expect(error == .notASocket(path: path))
        #expect(error.code == .socketTaken)
        #expect(error.cause == nil)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "precious")
    }

    // MARK: The daemon's start

    @Test func startErrorsKeepTheirMessagesAndGroupByCode() {
        let cause = SystemError("pipe", errno: EMFILE)
        let cases: [(Daemon.StartError, Daemon.StartError.Code, String)] = [
            (
                .signalsUnavailable(cause: cause), .signalsUnavailable,
                "cannot catch SIGTERM, SIGINT and SIGHUP, so the daemon could not stop gracefully: "
                    + "pipe: Too many open files"
            ),
            (
                .socketInUse(path: "/run/x.sock"), .socketTaken,
                "another pwflagsd is already serving /run/x.sock; not taking its socket"
            ),
            (
                .notASocket(path: "/run/x.sock"), .socketTaken,
                "/run/x.sock exists and is not a socket; remove it or choose another SocketPath"
            ),
            (
                .cannotListen(path: "/run/x.sock", cause: SystemError("bind", errno: EACCES)), .socketUnavailable,
                "cannot listen on /run/x.sock: Permission denied"
            ),
        ]
        for (error, code, message) in cases {
            #expect(error.code == code, "\(error)")
            #expect(error.description == message)
        }
        #expect(Daemon.StartError.signalsUnavailable(cause: cause).cause == cause)
        #expect(Daemon.StartError.socketInUse(path: "/run/x.sock").cause == nil)
    }

    /// The error `body` throws, nil when it throws none.
    static func failure<Failure: Error>(_ body: () throws(Failure) -> Void) -> Failure? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }
}

extension Result {
    fileprivate var failure: Failure? {
        guard case .failure(let error) = self else { return nil }
        return error
    }
}
