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
        // Linux interfaces the Glibc module leaves out (epoll, eventfd, inotify); headers only.
        .systemLibrary(name: "CLinux"),
        // Pure model: JSON values, flags, typed reads, diffs, durations, configuration. No I/O, no clocks.
        .target(name: "FlagsCore", swiftSettings: strict, linkerSettings: [.linkedLibrary("m")]),
        // The Pushwoosh json/1.3 wire format (UPSTREAM.md) and its HTTP transport.
        .target(name: "PushwooshAPI", dependencies: ["FlagsCore"], swiftSettings: strict),
        // The local socket's wire format (PROTOCOL.md), shared by daemon, library and CLI.
        .target(name: "FlagsProtocol", dependencies: ["FlagsCore"], swiftSettings: strict),
        // The few unsafe POSIX pieces: EINTR-retrying syscalls, sockaddr_un, file descriptors.
        .target(name: "UnixIO", swiftSettings: strict),
        // The daemon's services: store, sources, socket server, systemd glue.
        .target(
            name: "FlagsDaemon",
            dependencies: ["FlagsCore", "FlagsProtocol", "PushwooshAPI", "UnixIO", "CSystemd", "CLinux"],
            swiftSettings: strict
        ),
        // The client library local Swift apps import.
        .target(name: "FeatureFlags", dependencies: ["FlagsCore", "FlagsProtocol", "UnixIO"], swiftSettings: strict),
        .executableTarget(name: "pwflagsd", dependencies: ["FlagsDaemon"], swiftSettings: strict),
        .executableTarget(name: "pwflags", dependencies: ["FeatureFlags"], swiftSettings: strict),
        // The benchmark of issue 7: pwflagsd against the machine's floor, in one run.
        .executableTarget(
            name: "pwflags-bench",
            dependencies: ["FlagsCore", "UnixIO", "FeatureFlags", "TestSupport", "CLinux"],
            swiftSettings: strict
        ),
        // The soak of issue 8: ten minutes of steady load, flag changes and subscriber churn, then the checks.
        .executableTarget(
            name: "pwflags-soak",
            dependencies: ["FlagsCore", "FlagsProtocol", "FeatureFlags", "TestSupport"],
            swiftSettings: strict
        ),
        // The seed's checkout example on Linux, run by an integration test.
        .executableTarget(
            name: "checkout-example",
            dependencies: ["FeatureFlags"],
            path: "Sources/checkout-example",
            swiftSettings: strict
        ),

        .target(
            name: "TestSupport",
            dependencies: ["FlagsCore", "FlagsProtocol", "UnixIO"],
            path: "Tests/TestSupport",
            swiftSettings: strict
        ),
        .testTarget(name: "FlagsCoreTests", dependencies: ["FlagsCore"], swiftSettings: strict),
        .testTarget(
            name: "FlagsProtocolTests", dependencies: ["FlagsProtocol", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "PushwooshAPITests", dependencies: ["PushwooshAPI", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "FlagsDaemonTests", dependencies: ["FlagsDaemon", "FlagsProtocol", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "FeatureFlagsTests", dependencies: ["FeatureFlags", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "TestSupport", "FeatureFlags", "FlagsProtocol", "pwflagsd", "pwflags", "checkout-example",
                "pwflags-soak",
            ],
            swiftSettings: strict
        ),
    ]
)
