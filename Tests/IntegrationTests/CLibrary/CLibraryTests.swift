import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// libpwflags from C, C++ and Python against the real daemon: the SDK's calls as a C program makes them.
@Suite(.serialized, .hangLimit) struct CLibraryTests {
    /// The demo flags (config/demo-flags.json's), served from a local file.
    static func demoDaemon() throws -> DaemonProcess {
        try DaemonProcess.serving(Fixtures.all)
    }

    @Test("The checkout example, compiled with gcc -Wall -Wextra -Werror, reads, refreshes and logs its impression")
    func checkoutExample() async throws {
        let library = try CLibrary.build()
        let example = try library.compile(["examples/checkout.c"], output: "checkout")
        let daemon = try Self.demoDaemon()
        defer { daemon.cleanUp() }
        let program = try CProgram(example, ["--socket", daemon.socketPath])
        #expect(program.line(startingWith: "new checkout") == "new checkout: button green, at most 5 items")
        #expect(
            program.line(startingWith: "  express")
                == #"  express yes, layout {"columns":2}, steps ["cart","pay"], rule r_1a2b3c4d"#)
        #expect(program.line(startingWith: "search:") == "search: v2")
        #expect(program.line(startingWith: "refresh") == "refreshed")
        #expect(program.finish() == 0)
        // The impression reached the daemon: with the local file it is logged once (R18).
        #expect(
            await Eventually.wait(timeout: .seconds(10)) {
                daemon.log.contains("PWFLAGS_EVENT=impression FLAG_KEY=new_checkout")
            })
    }

    @Test("Typed reads give the value when its type matches and the default otherwise")
    func typedReads() throws {
        let library = try CLibrary.build()
        let daemon = try Self.demoDaemon()
        defer { daemon.cleanUp() }
        let program = try CProgram(try library.compile(["tests/probe.c"], output: "probe"), [daemon.socketPath])
        #expect(program.ask("snapshot 15000", expecting: "snapshot") == "snapshot 1")
        #expect(
            program.ask("get new_checkout", expecting: "flag")
                == "flag new_checkout enabled rule=r_1a2b3c4d source=file")
        #expect(program.ask("get New_checkout", expecting: "flag") == "flag New_checkout absent r=0")
        #expect(
            program.ask("get holiday_banner", expecting: "flag") == "flag holiday_banner disabled rule= source=file")
        #expect(program.ask("string new_checkout button_color blue", expecting: "string") == "string green")
        #expect(program.ask("string new_checkout max_items blue", expecting: "string") == "string blue")
        #expect(program.ask("number new_checkout max_items 3", expecting: "number") == "number 5")
        #expect(program.ask("number new_checkout express 3", expecting: "number") == "number 3")
        #expect(program.ask("bool new_checkout express 0", expecting: "bool") == "bool 1")
        #expect(program.ask("bool new_checkout max_items 0", expecting: "bool") == "bool 0")
        #expect(program.ask("object new_checkout layout", expecting: "object") == #"object {"columns":2}"#)
        #expect(program.ask("object new_checkout steps", expecting: "object") == "object (null)")
        #expect(program.ask("array new_checkout steps", expecting: "array") == #"array ["cart","pay"]"#)
        #expect(program.ask("enabled search_v2 0", expecting: "enabled") == "enabled 1")
        #expect(program.ask("enabled no_such_flag 1", expecting: "enabled") == "enabled 1")
        #expect(program.ask("enabled dark_mode 1", expecting: "enabled") == "enabled 0")
        #expect(program.finish() == 0)
    }

    @Test("A listener is called after a change only, with what changed, and not once removed (R9)")
    func listenerAfterChangeOnly() async throws {
        let library = try CLibrary.build()
        let daemon = try Self.demoDaemon()
        defer { daemon.cleanUp() }
        let program = try CProgram(try library.compile(["tests/probe.c"], output: "probe"), [daemon.socketPath])
        #expect(program.ask("snapshot 15000", expecting: "snapshot") == "snapshot 1")
        #expect(program.ask("listen", expecting: "listening") == "listening 1")
        // The same flags written again: no change, no call; then a real one.
        try daemon.writeFlags(Fixtures.all)
        var dark = Fixtures.darkMode
        dark.isEnabled = true
        try daemon.writeFlags([Fixtures.newCheckout, Fixtures.searchV2, dark])
        #expect(program.line(startingWith: "update") == "update changed=dark_mode removed=New_Checkout,holiday_banner")
        #expect(program.ask("enabled dark_mode 0", expecting: "enabled") == "enabled 1")
        #expect(program.ask("unlisten", expecting: "unlistened") == "unlistened 0")
        try daemon.writeFlags(Fixtures.all)
        #expect(
            await Eventually.wait(timeout: .seconds(15)) {
                program.ask("get holiday_banner", expecting: "flag")?.hasPrefix("flag holiday_banner disabled") == true
            })
        #expect(program.takeUpdates().isEmpty)
        #expect(program.finish() == 0)
    }

    @Test("Impressions, the user id, the app state and status answer through their callbacks")
    func calls() throws {
        let library = try CLibrary.build()
        // Lifecycle=client: the app state is the programs' to report (R8a), and status shows it.
        let daemon = try DaemonProcess.serving(Fixtures.all, extra: "Lifecycle=client\n")
        defer { daemon.cleanUp() }
        let program = try CProgram(try library.compile(["tests/probe.c"], output: "probe"), [daemon.socketPath])
        #expect(program.ask("snapshot 15000", expecting: "snapshot") == "snapshot 1")
        #expect(
            program.ask("impression new_checkout", expecting: "impression")
                == "impression error=0 outcome=logged status=0")
        #expect(
            program.ask("impression new_checkout", expecting: "impression")
                == "impression error=0 outcome=duplicate status=0")
        #expect(
            program.ask("impression nothing_here", expecting: "impression")
                == "impression error=0 outcome=noFlag status=0")
        #expect(program.ask("state foreground", expecting: "state") == "state error=0")
        let status = try #require(program.ask("status", expecting: "status"))
        #expect(status.hasPrefix(#"status error=0 {"appState":"foreground""#))
        // ControlGroups is empty here: every peer may switch the user.
        #expect(program.ask("user someone", expecting: "user") == "user error=0")
        #expect(program.finish() == 0)
    }

    @Test("R11: a failed refresh completes with -EIO and the HTTP status; a daemon that is not there with status 0")
    func refreshStatus() throws {
        let library = try CLibrary.build()
        let probe = try library.compile(["tests/probe.c"], output: "probe")
        let rig = try PushwooshRig.start(daemon: ClientLibraryRefreshTests.startDaemon) {
            $0.setDefaultReply(.status(503), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let program = try CProgram(probe, [rig.daemon.socketPath])
        #expect(program.ask("refresh", expecting: "refresh", timeout: .seconds(60)) == "refresh error=-5 status=503")
        #expect(program.finish() == 0)
        let absent = try CProgram(probe, ["/tmp/pwflags-no-such-daemon.sock"])
        #expect(absent.ask("refresh", expecting: "refresh") == "refresh error=-107 status=0")
        #expect(absent.finish() == 0)
    }

    @Test("The header is usable as is from C++ (g++ -Wall -Wextra -Werror -pedantic)")
    func cplusplus() throws {
        let library = try CLibrary.build()
        let program = try library.compile(
            ["tests/cxx_example.cpp"], compiler: "g++", flags: ["-std=c++17", "-pedantic"], output: "cxx-example")
        let daemon = try Self.demoDaemon()
        defer { daemon.cleanUp() }
        let run = try CProgram(program, [daemon.socketPath])
        #expect(
            run.line(startingWith: "c++ new_checkout")
                == #"c++ new_checkout enabled color=green max_items=5 steps=["cart","pay"]"#)
        #expect(run.line(startingWith: "c++ search_v2") == "c++ search_v2 1 removed=0")
    }

    @Test("Python reads flags through ctypes with no compiled glue")
    func python() throws {
        let library = try CLibrary.build()
        let daemon = try Self.demoDaemon()
        defer { daemon.cleanUp() }
        let run = try CProgram(
            "/usr/bin/python3", [CLibrary.source + "/tests/ctypes_example.py", library.sharedObject, daemon.socketPath])
        #expect(
            run.line(startingWith: "python new_checkout")
                == #"python new_checkout enabled rule=r_1a2b3c4d color=green max_items=5 express=1 layout={"columns":2}"#
        )
        #expect(run.line(startingWith: "python search_v2") == "python search_v2 1 missing 1")
        #expect(run.line(startingWith: "python refresh") == "python refresh error=0 status=200")
    }

    @Test("The GLib example runs the client from a GLib main loop (g_unix_fd_add)")
    func glibMainLoop() throws {
        let library = try CLibrary.build()
        let program = try library.compile(
            ["examples/glib.c"], links: ["$(pkg-config --cflags --libs glib-2.0)"], output: "glib-example")
        let daemon = try Self.demoDaemon()
        defer { daemon.cleanUp() }
        let run = try CProgram(program, [daemon.socketPath])
        #expect(run.line(startingWith: "glib") == "glib new_checkout enabled")
        #expect(run.finish() == 0)
    }
}
