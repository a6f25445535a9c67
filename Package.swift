// swift-tools-version:6.0
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "pwflagsd",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "FeatureFlags", targets: ["FeatureFlags"]),
        .library(name: "FeatureFlagsCompat", targets: ["FeatureFlagsCompat"]),
        .executable(name: "pwflagsd", targets: ["pwflagsd"]),
        .executable(name: "pwflags", targets: ["pwflags"]),
    ],
    targets: [
        // libsystemd through pkg-config; the only C the project links.
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // libcurl, the HTTPS client that talks to Pushwoosh: loaded with dlopen at the first request, not linked
        // (CCurl.h says why); libcurl4-openssl-dev gives its header.
        .target(name: "CCurl"),
        // The daemon's D-Bus object table: sd-bus builds it with C macros Swift cannot expand, so it is written in C;
        // every call and property read goes to the daemon's Swift code (FlagsDaemon/Bus).
        .target(name: "CSystemdBus", dependencies: ["CSystemd"]),
        // Linux interfaces the Glibc module leaves out (epoll, eventfd, inotify, timerfd, prctl); headers only, used
        // by UnixIO (and the bench's floor). Also the Swift runtime's enqueue hooks and libdispatch's main-queue
        // calls, which Executors uses when built with a Swift older than 6.3.
        .systemLibrary(name: "CLinux"),
        // Pure model: JSON values, flags, typed reads, diffs, durations, configuration. No I/O, no clocks.
        .target(name: "FlagsCore", swiftSettings: strict, linkerSettings: [.linkedLibrary("m")]),
        // The Pushwoosh json/1.3 wire format (docs/behaviour.md, Talking to Pushwoosh) and its HTTP transport.
        .target(name: "PushwooshAPI", dependencies: ["FlagsCore", "CCurl", "UnixIO"], swiftSettings: strict),
        // The local socket's wire format (docs/protocol.md), shared by daemon, library and CLI.
        .target(name: "FlagsProtocol", dependencies: ["FlagsCore"], swiftSettings: strict),
        // The system-call wrappers: the EINTR-retrying syscall helper, sockaddr_un, sockets, epoll, eventfd, inotify,
        // timerfd, the signal pipe, bounded reads and atomic writes, per-thread references, and the one lock type
        // (Locked, a pthread mutex ThreadSanitizer sees). Not the only unsafe code: docs/architecture.md lists the
        // files elsewhere that use unsafe pointers or call libc themselves.
        .target(name: "UnixIO", dependencies: ["CLinux"], swiftSettings: strict),
        // The daemon's own executors (the main thread's and a small pool of pthreads) in place of libdispatch's,
        // installed by pwflagsd's main.swift only: an idle daemon then wakes no thread (docs/performance.md, Idle
        // wakeups). Uses Swift 6.3's ExecutorFactory SPI, and the runtime's enqueue hooks with an older Swift
        // (docs/decisions.md).
        .target(name: "Executors", dependencies: ["UnixIO", "CLinux"], swiftSettings: strict),
        // OpenFeature's remote evaluation protocol (docs/openfeature.md): the HTTP/1.1 subset it needs and the
        // mapping of flags to OFREP evaluations. Pure: bytes in, bytes out; the daemon's listener does the I/O.
        .target(name: "OFREP", dependencies: ["FlagsCore"], swiftSettings: strict),
        // The daemon's services: store, sources, socket server, OFREP listener, systemd glue.
        .target(
            name: "FlagsDaemon",
            dependencies: ["FlagsCore", "FlagsProtocol", "PushwooshAPI", "UnixIO", "CSystemd", "CSystemdBus", "OFREP"],
            swiftSettings: strict
        ),
        // The client library local Swift apps import.
        .target(name: "FeatureFlags", dependencies: ["FlagsCore", "FlagsProtocol", "UnixIO"], swiftSettings: strict),
        // The SDK's Foundation-shaped surface (NSError, [String: Any]) for the apps that want it; links Foundation.
        .target(name: "FeatureFlagsCompat", dependencies: ["FeatureFlags"], swiftSettings: strict),
        // The CLI's commands, a library so that the daemon's binary runs them when started as `pwflags`.
        .target(
            name: "PWFlagsCLI", dependencies: ["FeatureFlags", "FlagsCore", "FlagsProtocol", "UnixIO"],
            swiftSettings: strict),
        // One binary for the device: pwflagsd, and the CLI when started under the name `pwflags`.
        .executableTarget(
            name: "pwflagsd", dependencies: ["FlagsDaemon", "FlagsCore", "PWFlagsCLI", "UnixIO", "Executors"],
            swiftSettings: strict),
        .executableTarget(name: "pwflags", dependencies: ["PWFlagsCLI"], swiftSettings: strict),
        // The benchmark (docs/performance.md): pwflagsd against the machine's floor, in one run.
        .executableTarget(
            name: "pwflags-bench",
            dependencies: ["FlagsCore", "UnixIO", "FeatureFlags", "PWFlagsTestKit", "CLinux", "CSystemd"],
            swiftSettings: strict
        ),
        // The benchmark's start-up floor: the least a Swift program built like pwflagsd costs from exec to exit.
        .executableTarget(name: "pwflags-bench-floor", swiftSettings: strict),
        // The soak (docs/reliability.md): ten minutes of steady load, flag changes and subscriber churn, then the
        // checks.
        .executableTarget(
            name: "pwflags-soak",
            dependencies: ["FlagsCore", "FlagsProtocol", "FeatureFlags", "PWFlagsTestKit", "UnixIO"],
            swiftSettings: strict
        ),
        // The fleet simulator: a million devices on FlagsCore's real RefreshPolicy against a simulated Pushwoosh,
        // the table of targets and the plots of docs/fleet/ (docs/fleet.md).
        .target(name: "FleetSimulation", dependencies: ["FlagsCore"], swiftSettings: strict),
        .executableTarget(
            name: "pwflags-fleet", dependencies: ["FleetSimulation", "FlagsCore", "UnixIO"], swiftSettings: strict),
        // The seed's checkout example on Linux, run by an integration test.
        .executableTarget(
            name: "checkout-example",
            dependencies: ["FeatureFlags"],
            path: "Sources/checkout-example",
            swiftSettings: strict
        ),

        // What the bench, the soak and the tests share: the real daemon started and stopped, the fake Pushwoosh
        // server, socket clients, measuring and reporting. A library of the package, never a product.
        .target(name: "PWFlagsTestKit", dependencies: ["FlagsCore", "UnixIO", "CSystemd"], swiftSettings: strict),
        // Test-only helpers (fuzzing, CLI runs, system users, tmpfs); re-exports PWFlagsTestKit.
        .target(
            name: "TestSupport",
            dependencies: ["PWFlagsTestKit", "FlagsCore", "FlagsProtocol", "UnixIO"],
            path: "Tests/TestSupport",
            swiftSettings: strict,
            // The test kit finds this hook by name at run time (DaemonExitCheck): it must be in the dynamic
            // symbol table of the test executable.
            linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic-symbol=pwflags_test_kit_record_issue"])]
        ),
        .testTarget(name: "FlagsCoreTests", dependencies: ["FlagsCore", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "FlagsProtocolTests", dependencies: ["FlagsProtocol", "FlagsCore", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "PushwooshAPITests", dependencies: ["PushwooshAPI", "FlagsCore", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "FlagsDaemonTests",
            dependencies: [
                "FlagsDaemon", "FlagsCore", "FlagsProtocol", "PushwooshAPI", "UnixIO", "CLinux", "TestSupport",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "FeatureFlagsTests",
            dependencies: [
                "FeatureFlags", "FeatureFlagsCompat", "FlagsCore", "FlagsProtocol", "UnixIO", "TestSupport",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "OFREPTests", dependencies: ["OFREP", "FlagsCore", "UnixIO", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "FleetSimulationTests", dependencies: ["FleetSimulation", "FlagsCore", "TestSupport"],
            swiftSettings: strict),
        .testTarget(name: "UnixIOTests", dependencies: ["UnixIO", "CLinux", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "ExecutorsTests", dependencies: ["Executors", "UnixIO", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "TestSupport", "FeatureFlags", "FeatureFlagsCompat", "FlagsCore", "FlagsProtocol", "UnixIO", "pwflagsd",
                "pwflags", "checkout-example",
                "pwflags-soak",
            ],
            swiftSettings: strict
        ),
    ]
)
