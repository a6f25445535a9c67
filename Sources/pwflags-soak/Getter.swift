import FlagsCore
import Foundation
import PWFlagsTestKit
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// One thread of steady reads on a connection of its own: `get` of keys that exist or not, `isEnabled`, and now
/// and then a `getAll`, paced to `rate` calls per second (never flat out), each answer checked.
final class Getter: Sendable {
    private let socketPath: String
    private let rate: Int
    private let universe: [String]
    private let tally: Tally
    private let seed: UInt64
    private let worker = WorkerThread()

    init(socketPath: String, rate: Int, universe: [String], tally: Tally, seed: UInt64) {
        self.socketPath = socketPath
        self.rate = rate
        self.universe = universe
        self.tally = tally
        self.seed = seed
    }

    func start() {
        worker.start(name: "soak-getter") { [self] in run() }
    }

    /// Stops the thread, which closes its connection.
    func stop() {
        worker.stop()
    }

    private func run() {
        var random = SeededGenerator(seed: seed)
        guard let client = tally.connection(.request, { try LineClient(path: socketPath) }) else { return }
        let interval = UInt64(1_000_000_000 / rate)
        var next = MonotonicClock.nanoseconds()
        var id = 0
        var served = 0
        defer { tally.update { $0.requests += served } }
        while !worker.isStopping {
            let now = MonotonicClock.nanoseconds()
            if now < next {
                usleep(UInt32((next - now) / 1000))
            } else if now - next > 1_000_000_000 {
                next = now  // fell more than a second behind (a stalled machine): no burst to catch up
            }
            next += interval
            id += 1
            let request = Self.request(id: id, random: &random, universe: universe)
            do {
                try client.send(Array((request.line + "\n").utf8))
            } catch {
                tally.fail(.request, "send: \(error)")
                return
            }
            guard let answer = client.readText() else {
                tally.fail(.request, "the daemon closed the connection")
                return
            }
            if let problem = Self.check(answer, id: id, request: request) {
                tally.fail(.request, problem)
            } else {
                served += 1
            }
            if served % 1000 == 0 {
                tally.update { $0.requests += served }
                served = 0
            }
        }
    }

    /// What was asked: the method and, for `get` and `isEnabled`, the key.
    struct Request {
        var line: String
        var method: String
        var key: String?
    }

    static func request(id: Int, random: inout SeededGenerator, universe: [String]) -> Request {
        let draw = Int.random(in: 0..<1000, using: &random)
        let key = universe.randomElement(using: &random) ?? "flag_0"
        switch draw {
        case 0..<5:
            return Request(line: #"{"id":\#(id),"method":"getAll"}"#, method: "getAll")
        case 5..<150:
            return Request(
                line: #"{"id":\#(id),"method":"isEnabled","params":{"key":"\#(key)","default":true}}"#,
                method: "isEnabled", key: key)
        case 150..<200:
            let missing = "missing_\(draw)"
            return Request(
                line: #"{"id":\#(id),"method":"get","params":{"key":"\#(missing)"}}"#, method: "get", key: missing)
        default:
            return Request(line: #"{"id":\#(id),"method":"get","params":{"key":"\#(key)"}}"#, method: "get", key: key)
        }
    }

    /// Nil when the answer is the right shape for the request, else what is wrong with it.
    static func check(_ answer: String, id: Int, request: Request) -> String? {
        guard let message = try? JSONValue(parsing: answer) else { return "not JSON: \(answer.prefix(200))" }
        guard message["id"]?.integerValue == id, let result = message["result"] else {
            return "\(request.method) \(request.key ?? ""): \(answer.prefix(200))"
        }
        switch request.method {
        case "get":
            guard let flag = result["flag"] else { return "get without flag: \(answer.prefix(200))" }
            if request.key?.hasPrefix("missing_") == true, !flag.isNull { return "get of a missing key: \(flag)" }
            if !flag.isNull, flag["key"]?.stringValue != request.key { return "get of \(request.key ?? ""): \(flag)" }
        case "isEnabled":
            guard result["enabled"]?.boolValue != nil, let found = result["found"]?.boolValue else {
                return "isEnabled: \(answer.prefix(200))"
            }
            if !found, result["enabled"]?.boolValue != true { return "isEnabled ignored the default: \(answer)" }
        default:
            guard result["revision"]?.integerValue != nil, result["flags"]?.arrayValue != nil else {
                return "getAll: \(answer.prefix(200))"
            }
        }
        return nil
    }
}
