/// The CLI's help texts, one per command.
enum Help {
    static let general = """
        pwflags: read Pushwoosh feature flags from pwflagsd

        Usage: pwflags [--socket PATH] [--json] [--wait SECONDS] COMMAND [ARGS]

        Commands:
          get KEY                              the flag, or exit 1 when there is none
          is-enabled KEY [--default BOOL]      true or false; exit 0 when enabled, 1 when not
          property KEY NAME --type TYPE [--default VALUE]
                                               a typed property read (string, number, bool, json)
          list                                 every flag
          listen [KEY...] [--exec CMD]         a line per change until interrupted, or CMD run per change
          status                               what the daemon is doing
          refresh                              fetch flags now (subject to RefreshThrottle)
          impression KEY                       log that the user reached the flag's code
          set-user-id ID                       the user flags are for ("" = back to the default)
          app-state foreground|background      report the app's state (Lifecycle=client)
          push-registered                      the device registered for push
          reload                               re-read the configuration (root and the daemon's user)
          explain KEY                          why the flag reads as it does, or why it is absent
          metrics [--format FORMAT]            counters as OpenMetrics text (or prometheus 0.0.4)
          override set|clear|list [KEY]        force a flag on this device for testing, and put it back
          export-seed                          the flags served now, as a seed for a device image (SeedFile=)

        Options:
          --socket PATH    the daemon's socket (default: $PWFLAGS_SOCKET, else /run/pwflagsd/pwflagsd.sock)
          --json           print JSON for programs instead of text
          --wait SECONDS   keep trying to connect for up to SECONDS (for scripts that start with the daemon)
          --help           this text, or a command's own with `pwflags COMMAND --help`
          --version        the version
          --               what follows is arguments, never options (keys that start with -)

        Exit status: 0 success, 1 flag absent or disabled or call refused, 2 usage, 69 daemon unreachable.
        """

    /// Every command, for "did you mean" (`text(for:)` holds each one's help).
    static let commands = [
        "get", "is-enabled", "property", "list", "listen", "status", "refresh", "impression", "set-user-id",
        "app-state", "push-registered", "reload", "explain", "metrics", "override", "export-seed", "help",
    ]

    /// The usage error for a command that does not exist, with the closest one when it is a likely typo.
    static func unknownCommand(_ command: String) -> Invocation.UsageError {
        Invocation.UsageError(
            message: "unknown command '\(command)'" + Suggestion.hint(for: command, among: commands)
                + "; see pwflags --help")
    }

    static func text(for command: String) -> String? {
        switch command {
        case "get":
            """
            Usage: pwflags get KEY [--json]

            Prints the flag KEY: whether it is enabled, the rule that decided it, its properties.
            Keys are case-sensitive. The daemon answers from the flags it holds and never waits for the network
            (R3). Exit 1 when it has no such flag.
            """
        case "is-enabled":
            """
            Usage: pwflags is-enabled KEY [--default BOOL] [--json]

            Prints true or false. When there is no flag KEY, prints the default (false unless given).
            Exit 0 when the answer is true, 1 when it is false, so that `if pwflags is-enabled KEY` works.
            """
        case "property":
            """
            Usage: pwflags property KEY NAME --type string|number|bool|json [--default VALUE] [--json]

            Prints the property NAME of flag KEY read as TYPE. A missing property, or one of another type,
            gives the default; json has no default and prints nothing then. Exit 1 when the flag is absent
            (the default is still printed) or when there is nothing to print.
            """
        case "list":
            """
            Usage: pwflags list [--json]

            Prints every flag sorted by key. With --json: {"epoch":E,"revision":N,"flags":[...]}.
            """
        case "listen":
            """
            Usage: pwflags listen [KEY...] [--exec CMD] [--json]

            Prints a line for each change of the given flags (all flags when none are given) until interrupted.
            With --json each line is the params of a flagsChanged notification. When the daemon goes away
            pwflags waits for it and resumes: it prints only the flags that changed meanwhile, never one twice.

            With --exec, runs CMD with /bin/sh -c after each change of the given flags instead, one run at a
            time: changes that come during a run make one more run after it. CMD finds the change in its
            environment: PWFLAGS_CHANGED and PWFLAGS_REMOVED (keys separated by spaces; in a key, %, space
            and control characters are written %XX), PWFLAGS_REVISION,
            PWFLAGS_EPOCH and PWFLAGS_SOCKET. A failing CMD is reported on stderr and listening goes on. When
            the daemon goes away pwflags waits for it and resumes: CMD runs only if the flags changed meanwhile.
            A unit that reads a flag at start can follow it with
            ExecStart=pwflags listen --exec 'systemctl try-restart app.service' KEY
            """
        case "status":
            """
            Usage: pwflags status [--json]

            Prints the daemon's status: source, flag count, fetch time, errors, session.
            """
        case "refresh":
            """
            Usage: pwflags refresh [--json]

            Asks the daemon to fetch flags now. Within RefreshThrottle of the last fetch it answers with the
            stored flags. Exit 1 when the refresh fails, with the failure's status: the HTTP status, 0 when
            Pushwoosh gave no HTTP answer, 200 for an answer that could not be used (R11).
            """
        case "impression":
            """
            Usage: pwflags impression KEY [--json]

            Tells Pushwoosh the user reached the code flag KEY controls (once per flag, rule and state per
            session). Prints the outcome: sent, duplicate, noFlag, failed, logged (the local file: nothing is sent)
            or overridden (an overridden flag's impression is never sent).
            """
        case "set-user-id":
            """
            Usage: pwflags set-user-id ID [--json]

            Sets the user flags are fetched for; "" goes back to UserID= or the HWID. The previous user's flags
            are discarded before the daemon answers (R8d), then new ones are fetched. Limited to ControlGroups.
            """
        case "app-state":
            """
            Usage: pwflags app-state foreground|background [--json]

            Reports the app's state with Lifecycle=client: coming to the foreground for the first time, or after
            SessionTimeout in the background, starts a session and a refresh (R8a). Limited to ControlGroups.
            """
        case "push-registered":
            """
            Usage: pwflags push-registered [--json]

            Tells the daemon the device registered for push notifications; flags are fetched again when the
            last request was sent before (R8c). Limited to ControlGroups.
            """
        case "reload":
            """
            Usage: pwflags reload [--json]

            Makes the daemon re-read its configuration and answers once the new one is applied, so that
            ExecReload=pwflags reload is synchronous. A broken configuration is refused with every problem
            (file and line) and the running one stays. Only root and the daemon's own user may reload.
            """
        case "explain":
            """
            Usage: pwflags explain KEY [--json]

            Explains flag KEY on one screen: its value and where it comes from (Pushwoosh, the local file, an
            override), what its rule id means (a matched rule, the default rule, killed), the revision at which
            it last changed, how many subscriptions listen to it, when the flags were fetched and expire, stale
            or partial, the last error and the next refresh. An absent key says why: no flags yet, expired, not
            in the response, or a key that differs only in case. Exit 1 when there is no flag KEY.
            """
        case "export-seed":
            """
            Usage: pwflags export-seed > seed.json

            Prints what the daemon serves now as a seed: the file a device image ships for [FeatureFlags]
            SeedFile=, so that a device that first boots offline serves these flags until its first fetch. Run
            it on a golden device that fetched its application's flags; a local override is left out (the
            source's value under it is kept). Exit 1 when the daemon serves no Pushwoosh application.
            """
        case "metrics":
            """
            Usage: pwflags metrics [--format openmetrics|prometheus] [--json]

            Prints the daemon's metrics: requests by method, errors by code, refreshes by trigger and outcome,
            flags, their age, connections, subscriptions, impressions, and how long a change takes to reach
            its subscribers. OpenMetrics text by default; prometheus is the 0.0.4 text format that
            node_exporter's textfile collector reads (MetricsFile= writes the same).
            """
        case "override":
            """
            Usage: pwflags override set KEY [--enabled BOOL] [--property NAME=JSON ...] [--json]
            Usage: pwflags override clear KEY | --all [--json]
            Usage: pwflags override list [--json]

            set forces flag KEY on this device, on top of Pushwoosh or the local file, and prints the flag now
            served: --enabled forces its state (else the source's), each --property replaces one property
            (a JSON value: a string needs quotes). A key the source lacks is added. clear puts the source's
            value back; list prints the overrides. Overrides survive restarts, reloads and user changes; an
            overridden flag's impression is never sent. set and clear are limited to ControlGroups.
            """
        default:
            nil
        }
    }
}
