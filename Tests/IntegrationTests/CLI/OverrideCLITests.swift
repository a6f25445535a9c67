import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `pwflags override set|clear|list` on the real daemon, and who may use the methods behind it.
@Suite(.hangLimit) struct OverrideCLITests {
    @Test("override set prints the flag now served, list prints the overrides, clear puts the source's value back")
    func setListClear() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let socket = ["--socket", daemon.socketPath]
        let set = try CLI.run(
            socket + [
                "override", "set", "dark_mode", "--enabled", "true", "--property", #"theme="dark""#,
                "--property", "contrast=2",
            ])
        #expect(set.status == 0, "\(set)")
        #expect(
            set.stdout
                == "dark_mode: enabled (override; file says disabled, rule r_5e6f7a8b)\n  contrast = 2\n"
                + "  theme = \"dark\"\n")
        let get = try CLI.run(socket + ["get", "dark_mode"])
        #expect(get.stdout == set.stdout)
        let list = try CLI.run(socket + ["override", "list"])
        #expect(list.stdout == "dark_mode: enabled\n  contrast = 2\n  theme = \"dark\"\n", "\(list)")
        let json = try CLI.run(socket + ["--json", "override", "list"])
        #expect(
            try JSONValue(parsing: json.stdout)
                == [
                    "overrides": [
                        ["key": "dark_mode", "enabled": true, "properties": ["theme": "dark", "contrast": 2]]
                    ]
                ])
        let added = try CLI.run(socket + ["override", "set", "qa_only"])
        #expect(added.stdout == "qa_only: disabled (override; not in the source)\n", "\(added)")
        let one = try CLI.run(socket + ["override", "clear", "dark_mode"])
        #expect(one.stdout == "cleared dark_mode\n", "\(one)")
        #expect(try CLI.run(socket + ["get", "dark_mode"]).stdout.hasPrefix("dark_mode: disabled (rule r_5e6f7a8b)"))
        let none = try CLI.run(socket + ["override", "clear", "dark_mode"])
        #expect(none.status == 0)
        #expect(none.stdout == "no override of 'dark_mode'\n")
        let all = try CLI.run(socket + ["--json", "override", "clear", "--all"])
        #expect(try JSONValue(parsing: all.stdout) == ["cleared": ["qa_only"]])
        #expect(try CLI.run(socket + ["override", "list"]).stdout == "(no overrides)\n")
    }

    @Test("impression of an overridden flag prints overridden and exits 0")
    func impressionOfAnOverriddenFlag() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let socket = ["--socket", daemon.socketPath]
        #expect(try CLI.run(socket + ["override", "set", "new_checkout", "--enabled", "no"]).status == 0)
        let impression = try CLI.run(socket + ["impression", "new_checkout"])
        #expect(impression.status == 0, "\(impression)")
        #expect(impression.stdout == "overridden\n")
    }

    @Test(
        "Usage mistakes exit 2 without calling the daemon",
        arguments: [
            ["override"], ["override", "toggle", "k"], ["override", "set"],
            ["override", "set", "k", "--enabled", "maybe"],
            ["override", "set", "k", "--property", "color=red"], ["override", "set", "k", "--property", "=1"],
            ["override", "clear"], ["override", "clear", "k", "--all"], ["override", "list", "k"],
        ])
    func usageMistakes(arguments: [String]) throws {
        let outcome = try CLI.run(["--socket", "/nonexistent/pwflags.sock"] + arguments)
        #expect(outcome.status == 2, "\(outcome)")
        #expect(!outcome.stderr.isEmpty)
    }

    @Test func bashCompletesTheActionsAndTheOptions() throws {
        #expect(try CompletionTests.complete("pwflags override ") == ["set", "clear", "list"])
        #expect(try CompletionTests.complete("pwflags override set k --enabled ") == ["true", "false"])
        #expect(try CompletionTests.complete("pwflags override set k --e") == ["--enabled"])
    }

    @Test(
        "A peer outside ControlGroups may list overrides but not set or clear them (-32001)",
        .enabled(if: getuid() == 0, "creates users and groups: needs root"))
    func controlGroupsLimitSetAndClear() throws {
        let control = try SystemGroup(prefix: "pwoc")
        defer { control.remove() }
        let outsider = try SystemUser(prefix: "pwoo")
        defer { outsider.remove() }
        let member = try SystemUser(prefix: "pwom", supplementaryGroups: [control])
        defer { member.remove() }
        let daemon = try DaemonProcess.serving(
            Fixtures.all, extra: "[Daemon]\nSocketMode=0666\nControlGroups=\(control.name)\n")
        defer { daemon.cleanUp() }
        #expect(chmod(daemon.directory.path, 0o755) == 0)
        let calls = [
            #"{"id":1,"method":"setOverride","params":{"key":"dark_mode","enabled":true}}"#,
            #"{"id":2,"method":"clearOverride","params":{"all":true}}"#,
            #"{"id":3,"method":"listOverrides"}"#,
        ]
        let refused = try outsider.send(calls, to: daemon.socketPath).stdout.split(separator: "\n")
            .compactMap { try? JSONValue(parsing: String($0)) }
        try #require(refused.count == 3, "\(refused)")
        #expect(refused[0]["error"]?["code"] == -32001)
        #expect(refused[1]["error"]?["code"] == -32001)
        #expect(refused[2]["result"] == ["overrides": []])
        #expect(try daemon.connect().call("get", ["key": "dark_mode"])?["result"]?["flag"]?["source"] == "file")
        let allowed = try member.send(calls, to: daemon.socketPath).stdout.split(separator: "\n")
            .compactMap { try? JSONValue(parsing: String($0)) }
        try #require(allowed.count == 3, "\(allowed)")
        #expect(allowed[0]["result"]?["flag"]?["source"] == "override")
        #expect(allowed[1]["result"] == ["cleared": ["dark_mode"]])
    }
}
