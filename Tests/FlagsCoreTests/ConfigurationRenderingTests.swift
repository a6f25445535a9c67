import FlagsCore
import TestSupport
import Testing

@Suite(.hangLimit) struct ConfigurationRenderingTests {
    private let noFiles: (String) -> Bool = { _ in false }

    @Test func rendersTheDefaultsWithEveryKey() {
        let text = Configuration().rendered(environment: [:], fileExists: noFiles)
        #expect(
            text == """
                # pwflagsd effective configuration.
                # Commented keys are unset; the note says what applies instead.

                [Pushwoosh]
                ApplicationCode=
                #ServerURL= (unused: ApplicationCode is empty)
                #APITokenFile= (none: $CREDENTIALS_DIRECTORY is unset)
                #HWID= (derived from the machine id)
                #UserID= (the HWID, until a client sets one)
                #DeviceType= (unset: device_type is left out)
                RequestTimeout=10s
                #CAFile= (unset: the system store alone)

                [FeatureFlags]
                CacheMaxAge=24h
                RefreshInterval=1h
                SessionTimeout=30min
                SessionMaxAge=24h
                RefreshThrottle=5min
                DisableThrottle=no
                Lifecycle=foreground
                #LocalFlagsFile= (unset: no local flags to serve)
                #SeedFile= (unused: ApplicationCode is empty)
                RetryBackoff=30s
                RefreshSpread=1h
                SessionStartDelay=1h

                [Daemon]
                SocketPath=/run/pwflagsd/pwflagsd.sock
                SocketMode=0660
                # StateDirectory: default
                StateDirectory=/var/lib/pwflagsd
                ControlGroups=
                MaxConnections=256
                MaxLineBytes=65536
                MaxPendingBytes=4194304
                MaxSubscriptions=64
                MaxListenKeys=1024
                IdleConnectionTimeout=5min
                LogLevel=info
                #MetricsFile= (unset: no metrics file is written)
                MetricsInterval=15s

                [OFREP]
                #ListenAddress= (unset: OFREP is off)
                #TokenFile= (unset: no token asked of Unix socket clients)
                ConnectionLimit=64
                IdleTimeout=30s
                RequestRate=500
                #AllowedOrigins= (empty: no browser page may read the listener)

                [DBus]
                Bus=system
                Name=io.github.pwflagsd.Flags1

                [Varlink]
                #SocketPath= (unset: Varlink is off)

                [Telemetry]
                #OTLPEndpoint= (unset: $OTEL_EXPORTER_OTLP_ENDPOINT, else no telemetry)
                ExportUserId=no
                ExportFlagValues=no
                MaxEvaluationRecords=1000

                """)
    }

    @Test func rendersSetValuesInTheFileSpelling() {
        var configuration = Configuration()
        configuration.applicationCode = "ABCDE-12345"
        configuration.hwid = "hw"
        configuration.deviceType = 19
        configuration.refreshInterval = .seconds(5400)
        configuration.retryBackoff = .milliseconds(1500)
        configuration.disableThrottle = true
        configuration.socketMode = 0o600
        configuration.controlGroups = ["wheel", "adm"]
        let lines = configuration.rendered(environment: [:], fileExists: noFiles).split(separator: "\n")
        #expect(lines.contains("ApplicationCode=ABCDE-12345"))
        #expect(lines.contains("#ServerURL= (default: https://ABCDE-12345.api.pushwoosh.com/json/1.3/)"))
        #expect(lines.contains("HWID=hw"))
        #expect(lines.contains("DeviceType=19"))
        #expect(lines.contains("RefreshInterval=1h 30min"))
        #expect(lines.contains("RetryBackoff=1s 500ms"))
        #expect(lines.contains("DisableThrottle=yes"))
        #expect(lines.contains("SocketMode=0600"))
        #expect(lines.contains("ControlGroups=wheel adm"))
    }

    @Test func resolvesEnvironmentDefaults() {
        let environment = ["STATE_DIRECTORY": "/var/lib/pwflagsd:/var/lib/other", "CREDENTIALS_DIRECTORY": "/run/cred"]
        let token = "/run/cred/pushwoosh-api-token"
        let lines = Configuration().rendered(
            environment: environment, apiToken: .present(byteCount: 32), fileExists: { $0 == token }
        ).split(separator: "\n")
        #expect(lines.contains("# StateDirectory: from $STATE_DIRECTORY"))
        #expect(lines.contains("StateDirectory=/var/lib/pwflagsd"))
        #expect(lines.contains("# APITokenFile: from $CREDENTIALS_DIRECTORY"))
        #expect(lines.contains("APITokenFile=/run/cred/pushwoosh-api-token"))
        #expect(lines.contains("# API token (/run/cred/pushwoosh-api-token): set (masked, 32 bytes)"))

        let missing = Configuration().rendered(environment: environment, apiToken: .missing, fileExists: noFiles)
        #expect(
            missing.contains(
                "#APITokenFile= (none: /run/cred/pushwoosh-api-token does not exist)\n# API token: not set\n"))
    }

    @Test func renderingParsesBackToTheSameConfiguration() {
        var configuration = Configuration()
        configuration.applicationCode = "ABCDE-12345"
        configuration.serverURL = "http://proxy:8080/json/1.3/"
        configuration.apiTokenFile = "/etc/pwflagsd/token"
        configuration.userID = "someone"
        configuration.sessionTimeout = .milliseconds(90_500)
        configuration.refreshThrottle = .zero
        configuration.lifecycle = .client
        configuration.localFlagsFile = "/srv/flags.json"
        configuration.stateDirectory = "/tmp/state"
        configuration.controlGroups = ["pwflags"]
        configuration.maxLineBytes = 2048
        configuration.logLevel = .notice

        var parsed = Configuration()
        let text = configuration.rendered(
            environment: [:], apiToken: .unreadable(reason: "Permission denied"), fileExists: noFiles)
        let problems = ConfigurationParser.parse(text: text, file: "rendered.conf", into: &parsed)
        #expect(problems == [])
        #expect(parsed == configuration)
        #expect(text.contains("# API token (/etc/pwflagsd/token): unreadable (Permission denied)\n"))
    }

    @Test(arguments: [
        ([String: String](), "/var/lib/pwflagsd"),
        (["STATE_DIRECTORY": ""], "/var/lib/pwflagsd"),
        (["STATE_DIRECTORY": "/var/lib/a:/var/lib/b"], "/var/lib/a"),
        (["STATE_DIRECTORY": "/var/lib/a"], "/var/lib/a"),
    ])
    func stateDirectoryFallsBackToTheEnvironmentThenTheDefault(environment: [String: String], expected: String) {
        #expect(Configuration().resolvedStateDirectory(environment: environment) == expected)
        var configured = Configuration()
        configured.stateDirectory = "/srv/state"
        #expect(configured.resolvedStateDirectory(environment: environment) == "/srv/state")
    }
}
