import FlagsCore
import Foundation
import TestSupport
import Testing

/// The bulk answer's `eventStreams` and the stream's events, checked by `jsonschema` against the schemas of the
/// OFREP specification (`eventStream`, `sseEvent`, `sseEventData`), as sent by the real daemon.
@Suite(.hangLimit) struct OFREPSchemaTests {
    @Test(arguments: [true, false])
    func eventStreamsAndEventsValidateAgainstTheProtocolsSchemas(tcp: Bool) throws {
        try BrowserVenv.prepare()
        let rig = try OFREPRig(tcp: tcp)
        defer { rig.cleanUp() }
        let first = try rig.bulkWithStream(headers: rig.authorization)
        let stream = try rig.streamClient()
        #expect(stream.open(first.target) == 200)
        var blocks: [JSONValue] = []
        let opening = try #require(stream.next())
        blocks.append(opening.schemaObject)
        try rig.daemon.writeFlags(OFREPEventStreamTests.changed)
        blocks.append(try #require(stream.nextEvent()).schemaObject)
        let session = try SocketSession(socketPath: rig.daemon.socketPath)
        _ = try session.result("setOverride", ["key": "banner", "enabled": true])
        blocks.append(try #require(stream.nextEvent()).schemaObject)
        // The opening `retry` block has no data, which sseEvent requires: it is a field of the stream, not an event.
        let events = Array(blocks.dropFirst())
        let directory = try TemporaryDirectory(prefix: "pwschema")
        defer { directory.remove() }
        var text: [UInt8] = []
        JSONValue.object(["eventStreams": try #require(first.answer.json?["eventStreams"]), "events": .array(events)])
            .write(to: &text)
        try directory.write("sent.json", String(decoding: text, as: UTF8.self))
        let script = Repository.root.appendingPathComponent("Tests/OpenFeature/validate_event_streams.py")
        let outcome = try Command.run(BrowserVenv.python, [script.path, directory.file("sent.json")], check: false)
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.stdout.contains("valid: 2 events"))
    }
}
