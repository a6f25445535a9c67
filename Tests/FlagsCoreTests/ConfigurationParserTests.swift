import FlagsCore
import TestSupport
import Testing

@Suite(.hangLimit) struct ConfigurationParserTests {
    /// Parses one file from the defaults and returns the configuration and the problem descriptions.
    private func parse(_ text: String, file: String = "/etc/pwflagsd/pwflagsd.conf") -> (Configuration, [String]) {
        var configuration = Configuration()
        let problems = ConfigurationParser.parse(text: text, file: file, into: &configuration)
        return (configuration, problems.map(\.description))
    }

    @Test func emptyFileGivesTheDefaults() {
        let (configuration, problems) = parse("")
        #expect(problems.isEmpty)
        #expect(configuration == Configuration())
    }

    @Test func fullFileSetsEveryKey() throws {
        let text = """
            # A comment
            ; another comment
            [Pushwoosh]
            ApplicationCode = ABCDE-12345
            ServerURL=http://127.0.0.1:8080/json/1.3/
            APITokenFile=/run/credentials/token
            HWID=0123456789abcdef0123456789abcdef
            UserID=user 42
            DeviceType=19
            RequestTimeout=2500ms

            [FeatureFlags]
            CacheMaxAge=2d
            RefreshInterval=1h 30min
            SessionTimeout=10min
            SessionMaxAge=12h
            RefreshThrottle=0
            DisableThrottle=Yes
            Lifecycle=client
            LocalFlagsFile=/srv/flags.json
            RetryBackoff=1.5s

            [Daemon]
            SocketPath=/run/test/flags.sock
            SocketMode=600
            StateDirectory=/var/tmp/flags
            ControlGroups=wheel  pwflags\tadm
            MaxConnections=10
            MaxLineBytes=1024
            MaxPendingBytes=2048
            MaxSubscriptions=3
            LogLevel=debug
            """
        let (configuration, problems) = parse(text)
        #expect(problems == [])

        var expected = Configuration()
        expected.applicationCode = "ABCDE-12345"
        expected.serverURL = "http://127.0.0.1:8080/json/1.3/"
        expected.apiTokenFile = "/run/credentials/token"
        expected.hwid = "0123456789abcdef0123456789abcdef"
        expected.userID = "user 42"
        expected.deviceType = 19
        expected.requestTimeout = .milliseconds(2500)
        expected.cacheMaxAge = .seconds(2 * 86400)
        expected.refreshInterval = .seconds(5400)
        expected.sessionTimeout = .seconds(600)
        expected.sessionMaxAge = .seconds(12 * 3600)
        expected.refreshThrottle = .zero
        expected.disableThrottle = true
        expected.lifecycle = .client
        expected.localFlagsFile = "/srv/flags.json"
        expected.retryBackoff = .milliseconds(1500)
        expected.socketPath = "/run/test/flags.sock"
        expected.socketMode = 0o600
        expected.stateDirectory = "/var/tmp/flags"
        expected.controlGroups = ["wheel", "pwflags", "adm"]
        expected.maxConnections = 10
        expected.maxLineBytes = 1024
        expected.maxPendingBytes = 2048
        expected.maxSubscriptions = 3
        expected.logLevel = .debug
        #expect(configuration == expected)
    }

    @Test(arguments: [
        ("yes", true), ("no", false), ("TRUE", true), ("false", false), ("On", true), ("off", false), ("1", true),
        ("0", false),
    ])
    func acceptsEverySystemdBoolean(text: String, expected: Bool) {
        let (configuration, problems) = parse("[FeatureFlags]\nDisableThrottle=\(text)\n")
        #expect(problems.isEmpty)
        #expect(configuration.disableThrottle == expected)
    }

    @Test(arguments: [
        ("https://pushwoosh.example/json/1.3/", true),
        ("HTTPS://proxy.local", true),
        ("http://[::1]:8080/json/1.3/", true),
        ("http://user:pw@proxy:3128/x", true),
        ("http://proxy.local/anything/else", true),
        ("ftp://proxy.local/", false),
        ("proxy.local/json/1.3/", false),
        ("http:///json/1.3/", false),
        ("http://:80/", false),
        ("http://host:port/", false),
        ("http://host:70000/", false),
        ("http://ho st/", false),
        ("/json/1.3/", false),
    ])
    func checksServerURL(url: String, valid: Bool) {
        let (configuration, problems) = parse("[Pushwoosh]\nServerURL=\(url)\n")
        if valid {
            #expect(problems.isEmpty)
            #expect(configuration.serverURL == url)
        } else {
            #expect(
                problems == [
                    "/etc/pwflagsd/pwflagsd.conf:2: invalid URL '\(url)' for ServerURL "
                        + "(expected an absolute http:// or https:// URL with a host)"
                ])
            #expect(configuration.serverURL == nil)
        }
    }

    @Test(
        arguments: [("0660", 0o660), ("660", 0o660), ("0", 0), ("777", 0o777), ("00600", 0o600)] as [(String, UInt32)])
    func readsSocketModeAsOctal(text: String, expected: UInt32) {
        let (configuration, problems) = parse("[Daemon]\nSocketMode=\(text)\n")
        #expect(problems.isEmpty)
        #expect(configuration.socketMode == expected)
    }

    @Test func reportsEveryProblemWithItsExactFileAndLine() {
        let text = """
            Stray=1
            [Bogus]
            Whatever=ignored because the section was reported
            [Pushwoosh]
            ApplicationCode=ABC_DE
            DeviceType=nineteen
            Foo=bar
            SocketPath=/run/x.sock
            applicationcode=ABCDE
            HWID=a\u{1B}b
            RequestTimeout=0
            [FeatureFlags]
            RefreshInterval=5 parsecs
            RefreshThrottle=-1s
            DisableThrottle=maybe
            Lifecycle=background
            not an assignment
            =value
            [Daemon
            MaxConnections=1
            [Daemon]
            SocketPath=run/pwflagsd.sock
            SocketMode=0999
            MaxConnections=0
            MaxLineBytes=512
            MaxPendingBytes=lots
            MaxSubscriptions=-3
            LogLevel=error
            ControlGroups=wheel a:b c/d
            """
        let (_, problems) = parse(text, file: "bad.conf")
        #expect(
            problems == [
                "bad.conf:1: key 'Stray' outside of any section (expected [Pushwoosh], [FeatureFlags] or [Daemon] before it)",
                "bad.conf:2: unknown section [Bogus]",
                "bad.conf:5: invalid application code 'ABC_DE' for ApplicationCode (expected letters, digits and hyphens only)",
                "bad.conf:6: invalid integer 'nineteen' for DeviceType",
                "bad.conf:7: unknown key 'Foo' in section [Pushwoosh]",
                "bad.conf:8: unknown key 'SocketPath' in section [Pushwoosh] (it belongs in [Daemon])",
                "bad.conf:9: unknown key 'applicationcode' in section [Pushwoosh] (keys are case-sensitive: did you mean 'ApplicationCode'?)",
                "bad.conf:10: invalid value 'a\\u{1B}b' for HWID (contains a control character)",
                "bad.conf:11: invalid duration '0' for RequestTimeout (must be greater than 0)",
                "bad.conf:13: invalid duration '5 parsecs' for RefreshInterval",
                "bad.conf:14: invalid duration '-1s' for RefreshThrottle",
                "bad.conf:15: invalid boolean 'maybe' for DisableThrottle (expected yes/no, true/false, on/off, 1/0)",
                "bad.conf:16: invalid lifecycle 'background' for Lifecycle (expected foreground or client)",
                "bad.conf:17: invalid line 'not an assignment' (expected Key=Value, a [Section] header or a comment)",
                "bad.conf:18: missing key name before '=' in '=value'",
                "bad.conf:19: invalid section header '[Daemon'",
                "bad.conf:22: invalid socket path 'run/pwflagsd.sock' for SocketPath (must be absolute)",
                "bad.conf:23: invalid mode '0999' for SocketMode (expected an octal mode from 0 to 0777, such as 0660)",
                "bad.conf:24: invalid number '0' for MaxConnections (expected a positive integer of at most 2147483647)",
                "bad.conf:25: invalid number '512' for MaxLineBytes (expected an integer from 1024 to 2147483647)",
                "bad.conf:26: invalid number 'lots' for MaxPendingBytes (expected a positive integer of at most 2147483647)",
                "bad.conf:27: invalid number '-3' for MaxSubscriptions (expected a positive integer of at most 2147483647)",
                "bad.conf:28: invalid log level 'error' for LogLevel (expected debug, info, notice, warning or err)",
                "bad.conf:29: invalid group names 'a:b', 'c/d' for ControlGroups",
            ])
    }

    @Test func badValuesLeaveTheKeyAsItWas() {
        let (configuration, problems) = parse("[FeatureFlags]\nRefreshInterval=2h\nRefreshInterval=soon\n")
        #expect(problems.count == 1)
        #expect(configuration.refreshInterval == .seconds(7200))
    }

    @Test func rejectsASocketPathThatDoesNotFitSunPath() {
        let long = "/" + String(repeating: "s", count: 107)
        let fits = "/" + String(repeating: "s", count: 106)
        let (configuration, problems) = parse("[Daemon]\nSocketPath=\(fits)\nSocketPath=\(long)\n", file: "a.conf")
        #expect(
            problems == [
                "a.conf:3: socket path '\(long)' for SocketPath is too long (108 bytes, at most 107 fit in sun_path)"
            ])
        #expect(configuration.socketPath == fits)
    }

    @Test func laterAssignmentWins() {
        let (configuration, problems) = parse(
            "[Daemon]\nLogLevel=debug\nMaxConnections=5\n[FeatureFlags]\nLifecycle=client\n[Daemon]\nLogLevel=warning\n"
        )
        #expect(problems.isEmpty)
        #expect(configuration.logLevel == .warning)
        #expect(configuration.maxConnections == 5)
        #expect(configuration.lifecycle == .client)
    }

    @Test func emptyValueResetsToTheDefault() {
        var parser = ConfigurationParser()
        parser.parse(
            text: "[Pushwoosh]\nHWID=abc\nRequestTimeout=3s\n[Daemon]\nControlGroups=wheel\nLogLevel=debug\n",
            file: "main.conf")
        parser.parse(
            text: "[Pushwoosh]\nHWID=\nRequestTimeout=\n[Daemon]\nControlGroups=\nLogLevel=  \n",
            file: "main.conf.d/10-reset.conf")
        #expect(parser.problems.isEmpty)
        #expect(parser.configuration == Configuration())
        #expect(parser.origins[.hwid] == ConfigurationOrigin(file: "main.conf.d/10-reset.conf", line: 2))
    }

    @Test func dropInsAppliedInOrderOverrideTheMainFile() throws {
        var parser = ConfigurationParser()
        parser.parse(text: "[Daemon]\nMaxConnections=10\nMaxSubscriptions=7\n", file: "main.conf")
        parser.parse(text: "[Daemon]\nMaxConnections=20\n", file: "main.conf.d/10-a.conf")
        parser.parse(text: "[Daemon]\nMaxConnections=30\n", file: "main.conf.d/20-b.conf")
        let configuration = try parser.finish().get()
        #expect(configuration.maxConnections == 30)
        #expect(configuration.maxSubscriptions == 7)
        #expect(parser.origins[.maxConnections] == ConfigurationOrigin(file: "main.conf.d/20-b.conf", line: 2))
        #expect(parser.origins[.maxSubscriptions] == ConfigurationOrigin(file: "main.conf", line: 3))
        #expect(parser.origins[.logLevel] == nil)
    }

    @Test func pendingBelowLineLimitIsBlamedOnTheLaterAssignment() {
        var parser = ConfigurationParser()
        parser.parse(text: "[Daemon]\nMaxPendingBytes=100000\n", file: "main.conf")
        parser.parse(text: "# raise the line limit\n[Daemon]\nMaxLineBytes=200000\n", file: "main.conf.d/50-big.conf")
        #expect(
            parser.finish().problems == [
                "main.conf.d/50-big.conf:3: MaxPendingBytes (100000) must be at least MaxLineBytes (200000)"
            ])

        var reversed = ConfigurationParser()
        reversed.parse(text: "[Daemon]\nMaxLineBytes=200000\nMaxPendingBytes=100000\n", file: "main.conf")
        #expect(
            reversed.finish().problems == [
                "main.conf:3: MaxPendingBytes (100000) must be at least MaxLineBytes (200000)"
            ]
        )
    }

    /// Problems between keys come in line order with the others, and the problems of several files are all kept.
    @Test(arguments: [
        (
            [("main.conf", "[OFREP]\nListenAddress=127.0.0.1:8016\n[Daemon]\nLogLevel=loud\n")],
            [
                "main.conf:2: ListenAddress is a TCP address: set TokenFile too",
                "main.conf:4: invalid log level 'loud' for LogLevel (expected debug, info, notice, warning or err)",
            ]
        ),
        (
            [("main.conf", "[Daemon]\nLogLevel=loud\n"), ("main.conf.d/a.conf", "[Nope]\n")],
            [
                "main.conf:2: invalid log level 'loud' for LogLevel (expected debug, info, notice, warning or err)",
                "main.conf.d/a.conf:1: unknown section [Nope]",
            ]
        ),
    ])
    func problemsAreReportedInOrder(files: [(name: String, text: String)], expected: [String]) {
        var parser = ConfigurationParser()
        for file in files { parser.parse(text: file.text, file: file.name) }
        #expect(parser.finish().problems == expected)
    }

    @Test func backslashContinuesTheLine() {
        let text = "[Daemon]\nControlGroups=wheel \\\n# a comment inside is skipped\n  adm\\\npwflags\nLogLevel=debug\n"
        let (configuration, problems) = parse(text)
        #expect(problems.isEmpty)
        #expect(configuration.controlGroups == ["wheel", "adm", "pwflags"])
        #expect(configuration.logLevel == .debug)
    }

    @Test(arguments: ["IdleTimeout=1000y", "IdleTimeout=10y 1s", "ConnectionLimit=2147483648", "RequestRate=-1"])
    func valuesPastTheirRangeAreRefused(line: String) {
        let (_, problems) = parse("[OFREP]\n\(line)\n", file: "r.conf")
        #expect(problems.count == 1, "\(problems)")
    }

    @Test func theLongestDurationIsTenYears() {
        let (configuration, problems) = parse("[OFREP]\nIdleTimeout=10y\n", file: "r.conf")
        #expect(problems.isEmpty)
        #expect(configuration.ofrepIdleTimeout == .seconds(315_576_000))
    }

    @Test func problemsInAContinuedLineNameItsFirstLine() {
        let (_, problems) = parse("[Daemon]\nMaxConnections=\\\nmany\n", file: "c.conf")
        #expect(
            problems == [
                "c.conf:2: invalid number 'many' for MaxConnections (expected a positive integer of at most 2147483647)"
            ])
    }

    @Test func escapedBackslashDoesNotContinue() {
        let (configuration, problems) = parse("[Pushwoosh]\nHWID=a\\\\\n[Daemon]\nLogLevel=err\n")
        #expect(problems.isEmpty)
        #expect(configuration.hwid == "a\\\\")
        #expect(configuration.logLevel == .err)
    }

    @Test func readsCRLFFilesAndAByteOrderMark() {
        let (configuration, problems) = parse("\u{FEFF}[Daemon]\r\nLogLevel=notice\r\n\r\n")
        #expect(problems.isEmpty)
        #expect(configuration.logLevel == .notice)
    }

    @Test func relativePathsResolveAgainstTheDirectoryOfTheirFile() {
        let text = "[Pushwoosh]\nAPITokenFile=token\n[FeatureFlags]\nLocalFlagsFile=demo-flags.json\n"
        #expect(parse(text, file: "config/demo.conf").0.localFlagsFile == "config/demo-flags.json")
        #expect(parse(text, file: "config/demo.conf").0.apiTokenFile == "config/token")
        #expect(parse(text, file: "/etc/pwflagsd/pwflagsd.conf").0.localFlagsFile == "/etc/pwflagsd/demo-flags.json")
        #expect(parse(text, file: "/demo.conf").0.localFlagsFile == "/demo-flags.json")
        #expect(parse(text, file: "demo.conf").0.localFlagsFile == "demo-flags.json")
        let absolute = "[FeatureFlags]\nLocalFlagsFile=/srv/flags.json\n"
        #expect(parse(absolute, file: "config/demo.conf").0.localFlagsFile == "/srv/flags.json")
        // The demo keeps its state in the checkout, beside its configuration, not in a /tmp anyone can plant.
        let state = "[Daemon]\nStateDirectory=../.build/demo-state\n"
        #expect(parse(state, file: "config/demo.conf").0.stateDirectory == "config/../.build/demo-state")
    }

    @Test func commandLineAssignmentsNameTheOption() {
        var parser = ConfigurationParser()
        parser.assign(.logLevel, value: "chatty", at: .commandLine, name: "--log-level")
        parser.assign(.socketPath, value: "/tmp/x.sock", at: .commandLine, name: "--socket")
        #expect(
            parser.problems.map(\.description) == [
                "command line: invalid log level 'chatty' for --log-level (expected debug, info, notice, warning or err)"
            ])
        #expect(parser.configuration.socketPath == "/tmp/x.sock")
        #expect(parser.origins[.socketPath] == .commandLine)
    }

    @Test func everyKeyBelongsToTheSectionCONFIGListsItIn() {
        #expect(
            ConfigurationSection.pushwoosh.keys.map(\.rawValue) == [
                "ApplicationCode", "ServerURL", "APITokenFile", "HWID", "UserID", "DeviceType", "RequestTimeout",
                "CAFile",
            ])
        #expect(ConfigurationSection.featureFlags.keys.count == 12)
        #expect(ConfigurationSection.daemon.keys.count == 13)
    }
}

extension Result<Configuration, ConfigurationErrors> {
    /// The problem descriptions of a failure; empty for a success.
    fileprivate var problems: [String] {
        guard case .failure(let errors) = self else { return [] }
        return errors.problems.map(\.description)
    }
}
