import FlagsCore
import Foundation
import TestSupport
import Testing

/// Guessing the OFREP token: wrong tokens are answered at a bounded rate for all clients together, a client with
/// the token is never slowed by guessers, and a token too short to resist guessing is refused.
@Suite(.hangLimit) struct OFREPTokenGuessTests {
    @Test func wrongTokensAreAnsweredAtMostTenASecondAndAClientWithTheTokenIsNotSlowed() throws {
        let rig = try OFREPRig(tcp: true, extra: "ConnectionLimit=64\n")
        defer { rig.cleanUp() }
        // Guessers in parallel, each guess on a connection of its own (a 401 closes it).
        let guesses = 40
        var guessers: [HTTPClient] = []
        let start = ContinuousClock.now
        for index in 0..<guesses {
            let guesser = try rig.client()
            #expect(guesser.send(HTTPClient.post(OFREPRig.bulk, headers: ["Authorization: Bearer guess-\(index)"])))
            guessers.append(guesser)
        }
        // While the guesses wait for their turn, a client with the token is answered.
        #expect(try rig.client().post(OFREPRig.bulk, headers: rig.authorization)?.status == 200)
        var answered = 0
        for guesser in guessers where guesser.readResponse(timeout: .seconds(20))?.status == 401 { answered += 1 }
        let elapsed = ContinuousClock.now - start
        #expect(answered == guesses, "\(answered) of \(guesses) guesses were answered")
        // A burst of 10, then 10 a second: the last of 40 cannot be answered before 3 s have passed.
        #expect(elapsed >= .milliseconds(2900), "\(guesses) wrong tokens answered in \(elapsed)")
        let rate =
            Double(guesses) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        print("token guessing: \(guesses) wrong tokens answered in \(elapsed), \(Int(rate)) a second")
        try rig.expectStillServing()
    }

    @Test func aTokenTooShortToResistGuessingIsRefusedByCheckConfigAndTurnsOFREPOff() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("token", "ab\n")
        try directory.write(LocalFlags.fileName, LocalFlags.text(Fixtures.all))
        let config = LocalFlags.config(
            in: directory, extra: "[OFREP]\nListenAddress=127.0.0.1:0\nTokenFile=\(directory.file("token"))\n")
        try directory.write("pwflagsd.conf", config)
        let checked = try CLI.run(
            ["--check-config", "--config", directory.file("pwflagsd.conf")], executable: "pwflagsd")
        #expect(checked.status == 1, "\(checked)")
        #expect(checked.stderr.contains("holds a token of 2 bytes; at least 16"), "\(checked)")
        let daemon = try DaemonProcess(config: config, directory: directory)
        defer { daemon.cleanUp() }
        #expect(daemon.log.contains("OFREP is off") && daemon.log.contains("at least 16"), "\(daemon.log)")
        #expect(try daemon.connect().call("get", ["key": "dark_mode"])?["result"] != nil)
    }
}
