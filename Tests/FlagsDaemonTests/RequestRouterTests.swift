import FlagsCore
import FlagsProtocol
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// What a request line becomes, decided on the loop's thread with no socket: an answer from the snapshot, an
/// error with the request's id, or `Work` for the async side; who may call what; what is counted.
@Suite(.hangLimit) struct RequestRouterTests {
    /// A peer that is neither root nor the daemon's user (`ownUID` 4000) and whose group is 1000.
    static let peer = PeerCredentials(pid: 1, uid: 1000, gid: 1000)

    /// A router over `rig`'s controller; what it hands to the async side is kept in `handed`.
    final class Routing {
        let rig: LocalStackRig
        let router: RequestRouter
        let subscriptions = SubscriptionTable()
        let handed = Locked<[RequestRouter.Work]>([])

        init(controlGroups: Set<UInt32>? = nil) async throws {
            rig = try LocalStackRig()
            await rig.start()
            let handed = self.handed
            router = RequestRouter(
                controller: rig.controller(access: AccessPolicy(controlGroups: controlGroups, ownUID: 4000)),
                subscriptions: subscriptions, submit: { work in handed.withLock { $0.append(work) } })
        }

        deinit { rig.remove() }

        func connection(_ peer: PeerCredentials = RequestRouterTests.peer) -> LineConnection {
            LineConnection(id: 7, fd: -1, peer: peer, maxLineBytes: 4096)
        }

        /// Routes `line` and returns the lines written for it, parsed (and takes them out of the queue).
        @discardableResult
        func route(_ line: String, on connection: LineConnection) throws -> [JSONValue] {
            router.route(
                ArraySlice(line.utf8), on: connection, snapshot: rig.store.current, limits: ServerLimits(),
                openConnections: 1)
            defer { connection.output.bytes.removeAll() }
            return try connection.output.bytes.split(separator: UInt8(ascii: "\n")).map {
                try JSONValue(parsing: Array($0))
            }
        }

        var handedCount: Int { handed.withLock { $0.count } }
    }

    @Test func getAndIsEnabledAreAnsweredFromTheSnapshotOnTheFastPath() async throws {
        let routing = try await Routing()
        let connection = routing.connection()
        let get = try routing.route(#"{"jsonrpc":"2.0","id":1,"method":"get","params":{"key":"a"}}"#, on: connection)
        #expect(get.first?["result"]?["flag"]?["ruleId"] == "r1")
        #expect(get.first?["id"] == 1)
        let missing = try routing.route(
            #"{"jsonrpc":"2.0","id":2,"method":"isEnabled","params":{"key":"zz","default":true}}"#, on: connection)
        #expect(missing.first?["result"]?["enabled"] == true)
        #expect(routing.router.metrics.fastGets == 1 && routing.router.metrics.fastIsEnabled == 1)
        #expect(routing.handedCount == 0 && !connection.busy)
    }

    @Test func theGeneralPathAnswersTheSameReadsAndCountsEachOnce() async throws {
        let routing = try await Routing()
        let connection = routing.connection()
        // An id that is not an integer: the scanner leaves the line to the full decoder, which echoes it as sent.
        let get = try routing.route(#"{"jsonrpc":"2.0","id":1.50,"method":"get","params":{"key":"b"}}"#, on: connection)
        #expect(get.first?["result"]?["flag"]?["enabled"] == false)
        #expect(get.first?["id"] == 1.5)
        let all = try routing.route(#"{"id":3,"jsonrpc":"2.0","method":"getAll"}"#, on: connection)
        #expect(all.first?["result"]?["flags"]?.arrayValue?.count == 2)
        let status = try routing.route(#"{"jsonrpc":"2.0","id":4,"method":"status"}"#, on: connection)
        #expect(status.first?["result"]?["source"] == "file")
        #expect(routing.router.metrics.requests["status"] == 1)
        // A `get` counts once, with the scanner's, whichever path answered it.
        #expect(routing.router.metrics.fastGets == 1 && routing.router.metrics.requests["get"] == nil)
    }

    @Test func errorsCarryTheirCodeAndTheIdAsSent() async throws {
        let routing = try await Routing()
        let connection = routing.connection()
        let notJSON = try routing.route("{not json", on: connection)
        #expect(notJSON.first?["error"]?["code"] == .number(Double(RPCError.parseErrorCode)))
        #expect(notJSON.first?["id"] == .null)
        let unknown = try routing.route(#"{"jsonrpc":"2.0","id":"u","method":"gte"}"#, on: connection)
        #expect(unknown.first?["error"]?["code"] == .number(Double(RPCError.methodNotFoundCode)))
        #expect(unknown.first?["id"] == "u")
        // The id's text comes back as sent, not as the Double it parses to.
        routing.router.route(
            ArraySlice(#"{"jsonrpc":"2.0","id":9007199254740993,"method":"gte"}"#.utf8), on: connection,
            snapshot: routing.rig.store.current, limits: ServerLimits(), openConnections: 1)
        #expect(String(decoding: connection.output.bytes, as: UTF8.self).contains(#""id":9007199254740993,"#))
        connection.output.bytes.removeAll()
        let noKey = try routing.route(#"{"jsonrpc":"2.0","id":5,"method":"get","params":{}}"#, on: connection)
        #expect(noKey.first?["error"]?["code"] == .number(Double(RPCError.invalidParamsCode)))
        #expect(routing.router.metrics.errors[RPCError.parseErrorCode] == 1)
        #expect(routing.router.metrics.errors[RPCError.methodNotFoundCode] == 2)
        #expect(routing.router.metrics.errors[RPCError.invalidParamsCode] == 1)
    }

    @Test func aNotificationGetsNoAnswerNotEvenAnError() async throws {
        let routing = try await Routing()
        let connection = routing.connection()
        #expect(try routing.route(#"{"jsonrpc":"2.0","method":"status"}"#, on: connection).isEmpty)
        #expect(try routing.route(#"{"jsonrpc":"2.0","method":"gte"}"#, on: connection).isEmpty)
        #expect(routing.router.metrics.errors.isEmpty)
    }

    @Test(arguments: [
        (#"{"jsonrpc":"2.0","id":1,"method":"refresh"}"#, "refresh"),
        (#"{"jsonrpc":"2.0","id":1,"method":"setUserId","params":{"userId":"alice"}}"#, "setUserId"),
        (#"{"jsonrpc":"2.0","id":1,"method":"setAppState","params":{"state":"background"}}"#, "setAppState"),
        (#"{"jsonrpc":"2.0","id":1,"method":"pushRegistered"}"#, "pushRegistered"),
        (#"{"jsonrpc":"2.0","id":1,"method":"logImpression","params":{"key":"a"}}"#, "logImpression"),
        (#"{"jsonrpc":"2.0","id":1,"method":"setOverride","params":{"key":"a","enabled":false}}"#, "setOverride"),
        (#"{"jsonrpc":"2.0","id":1,"method":"clearOverride","params":{"key":"a"}}"#, "clearOverride"),
    ])
    func methodsThatMayWaitLeaveAsWorkAndHoldTheConnection(line: String, method: String) async throws {
        let routing = try await Routing()
        let connection = routing.connection()
        #expect(try routing.route(line, on: connection).isEmpty, "\(method) is answered later")
        #expect(connection.busy)
        let work = try #require(routing.handed.withLock { $0.first })
        #expect(work.connection == connection.key)
        #expect(Array(work.requestID?.text ?? []) == Array("1".utf8))
        #expect(routing.router.metrics.requests[method] == 1)
        var answer: [UInt8] = []
        try (await work.perform()).get().write(to: &answer)
        #expect(!answer.isEmpty)
    }

    @Test func aControlCallFromOutsideControlGroupsIsRefusedAndNeverHanded() async throws {
        let routing = try await Routing(controlGroups: [4242])
        let outsider = routing.connection()
        let refused = try routing.route(
            #"{"jsonrpc":"2.0","id":1,"method":"setUserId","params":{"userId":"mallory"}}"#, on: outsider)
        #expect(refused.first?["error"]?["code"] == .number(Double(RPCError.notPermittedCode)))
        #expect(routing.handedCount == 0 && !outsider.busy)
        // Reads stay open to everyone who can connect.
        #expect(try routing.route(#"{"jsonrpc":"2.0","id":2,"method":"getAll"}"#, on: outsider).first?["result"] != nil)
        // A member by its primary group, and root, may.
        let member = routing.connection(PeerCredentials(pid: 2, uid: 1001, gid: 4242))
        try routing.route(#"{"jsonrpc":"2.0","id":3,"method":"pushRegistered"}"#, on: member)
        let root = routing.connection(PeerCredentials(pid: 3, uid: 0, gid: 0))
        try routing.route(#"{"jsonrpc":"2.0","id":4,"method":"pushRegistered"}"#, on: root)
        #expect(routing.handedCount == 2)
    }

    @Test func reloadIsForRootAndTheDaemonsUserEvenWithoutControlGroups() async throws {
        let routing = try await Routing(controlGroups: nil)
        let refused = try routing.route(#"{"jsonrpc":"2.0","id":1,"method":"reload"}"#, on: routing.connection())
        #expect(refused.first?["error"]?["code"] == .number(Double(RPCError.notPermittedCode)))
        let own = routing.connection(PeerCredentials(pid: 2, uid: 4000, gid: 4000))
        try routing.route(#"{"jsonrpc":"2.0","id":2,"method":"reload"}"#, on: own)
        #expect(routing.handedCount == 1 && own.busy)
    }

    @Test func stateChangesPastTheirBurstAreRefusedForAnUnprivilegedPeer() async throws {
        let routing = try await Routing()
        let connection = routing.connection()
        var refusals = 0
        for index in 0..<Int(StateWriteRate.burst) + 5 {
            connection.busy = false
            let line = #"{"jsonrpc":"2.0","id":\#(index),"method":"setOverride","params":{"key":"a","enabled":false}}"#
            let answer = try routing.route(line, on: connection)
            if answer.first?["error"]?["code"] == .number(Double(RPCError.tooManyStateChangesCode)) { refusals += 1 }
        }
        #expect(routing.handedCount >= Int(StateWriteRate.burst))
        #expect(refusals >= 1)
        // The daemon's own user is never limited.
        let own = routing.connection(PeerCredentials(pid: 2, uid: 4000, gid: 4000))
        let line = #"{"jsonrpc":"2.0","id":99,"method":"setOverride","params":{"key":"a","enabled":false}}"#
        #expect(try routing.route(line, on: own).isEmpty)
    }

    @Test func listenAndUnlistenGoToTheSubscriptionTable() async throws {
        let routing = try await Routing()
        let connection = routing.connection()
        let listen = try routing.route(
            #"{"jsonrpc":"2.0","id":1,"method":"listen","params":{"keys":["a"]}}"#, on: connection)
        let subscription = try #require(listen.first?["result"]?["subscription"]?.stringValue)
        #expect(routing.subscriptions.count == 1)
        let line = #"{"jsonrpc":"2.0","id":2,"method":"unlisten","params":{"subscription":"\#(subscription)"}}"#
        #expect(try routing.route(line, on: connection).first?["result"] == [:])
        #expect(routing.subscriptions.count == 0)
    }
}
