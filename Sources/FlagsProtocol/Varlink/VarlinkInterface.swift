public import FlagsCore

/// The Varlink interfaces the daemon serves: `org.varlink.service` (introspection) and
/// `io.github.pwflagsd.Flags`, whose description is the IDL file the package ships
/// (`systemd/io.github.pwflagsd.Flags.varlink`, installed in `/usr/share/pwflagsd`; a test holds the two equal).
public enum VarlinkInterface {
    /// The flags interface.
    public static let name = "io.github.pwflagsd.Flags"
    /// Varlink's own interface, which every service implements.
    public static let serviceName = "org.varlink.service"

    /// The methods of `io.github.pwflagsd.Flags`, each with the line protocol's method it carries out.
    public enum Method: String, Sendable, CaseIterable {
        case get = "Get"
        case getAll = "GetAll"
        case refresh = "Refresh"
        case listen = "Listen"
        case logImpression = "LogImpression"
        case setUserId = "SetUserId"
        case setAppState = "SetAppState"
        case explain = "Explain"
        case getStatus = "GetStatus"

        /// The line protocol's name of the same method (docs/protocol.md): its parameters are checked the same.
        public var lineMethod: String {
            switch self {
            case .getStatus: "status"
            default: rawValue.prefix(1).lowercased() + rawValue.dropFirst()
            }
        }
    }

    /// The `GetInfo` reply's parameters.
    public static func info(version: String) -> JSONValue {
        [
            "vendor": "pwflagsd", "product": "pwflagsd", "version": .string(version),
            "url": "https://docs.pushwoosh.com/", "interfaces": [.string(serviceName), .string(name)],
        ]
    }

    /// The description of an interface served here, nil for any other.
    public static func description(of interface: String) -> String? {
        switch interface {
        case name: description
        case serviceName: serviceDescription
        default: nil
        }
    }

    /// The IDL of `io.github.pwflagsd.Flags`.
    public static let description = #"""
        # The feature flags pwflagsd serves: the same flags, changes and control calls as its line protocol
        # (/run/pwflagsd/pwflagsd.sock), in Varlink's form (man:pwflagsd(8), docs/varlink.md).
        interface io.github.pwflagsd.Flags

        # A flag as the daemon serves it.
        type Flag (
          key: string,
          enabled: bool,
          # The deciding rule's id; "default" when no rule matched, "" when the flag was killed, "override" when a
          # local override decided it.
          ruleId: string,
          properties: object,
          # Where the value came from: pushwoosh, file or override.
          source: string,
          # On an overridden flag only: what the source holds for the key, null when the override added the flag.
          sourceValue: ?object
        )

        # A place in the daemon's change stream: the epoch is new at every start, the revision counts changes in it.
        type Position (
          epoch: string,
          revision: int
        )

        # The last failed refresh.
        type LastError (
          status: int,
          at: string,
          # dns, connect, tls, timeout, cancelled, network, notSent, http, tooLarge or unusable.
          kind: ?string,
          reason: ?string
        )

        # Why the last write of the disk cache failed.
        type CacheError (
          reason: string,
          at: string
        )

        # Impressions answered since the start, by outcome.
        type Impressions (
          duplicate: int,
          failed: int,
          logged: int,
          sent: int
        )

        # Where the daemon stands on its message bus.
        type Bus (
          bus: string,
          name: string,
          # serving, connecting or unavailable.
          state: string,
          reason: ?string
        )

        # The flags the device image ships (SeedFile); serving while they are the ones served.
        type Seed (
          file: string,
          exportedAt: ?string,
          flags: int,
          serving: bool
        )

        # The flag of a key; null when the daemon serves none by that key (an answer, not an error).
        method Get(key: string) -> (flag: ?Flag)

        # Every flag, sorted by key.
        method GetAll() -> (epoch: string, revision: int, flags: []Flag)

        # Asks the source now; the flags in effect after it.
        method Refresh() -> (epoch: string, revision: int, flags: []Flag, fromNetwork: bool)

        # With more: the first reply holds the flags of keys (every flag when keys is null), or unchanged when
        # since is where the daemon stands; each later reply, with continues, is a change: the flags that changed
        # and the keys that went. An update that changes none of keys sends nothing.
        method Listen(keys: ?[]string, since: ?Position) -> (
          epoch: string,
          revision: int,
          # When the flags served reach CacheMaxAge; null when they never expire or there are none.
          expiresAt: ?string,
          flags: ?[]Flag,
          unchanged: ?bool,
          changed: ?[]Flag,
          removed: ?[]string
        )

        # Reports that the user reached the code the flag controls: sent, duplicate, noFlag, failed (with status),
        # logged or overridden.
        method LogImpression(key: string) -> (outcome: string, status: ?int)

        # Sets the user (an empty id: back to the default); heldUntil when Retry-After holds the new user's request.
        method SetUserId(userId: string) -> (userId: string, heldUntil: ?string)

        # Reports the app's state: foreground or background.
        method SetAppState(state: string) -> (sessionStarted: bool)

        # Why the key reads as it does.
        method Explain(key: string) -> (
          flag: ?Flag,
          key: string,
          # pushwoosh, file, seed or override; null when the key reads as nothing.
          source: ?string,
          # matched, default, killed or override.
          rule: ?string,
          # noFlags, expired, notInResponse or caseDiffers.
          absence: ?string,
          similarKeys: []string,
          revision: int,
          changedAtRevision: ?int,
          subscriptions: int,
          fetchedAt: ?string,
          ageSeconds: ?float,
          expiresAt: ?string,
          stale: bool,
          partial: bool,
          lastError: ?LastError,
          nextRefreshAt: ?string,
          heldUntil: ?string,
          problem: ?string
        )

        # The daemon's state, as pwflags status shows it.
        method GetStatus() -> (
          appState: string,
          applicationCode: ?string,
          bus: ?Bus,
          cacheError: ?CacheError,
          connections: int,
          epoch: string,
          expiresAt: ?string,
          fetchedAt: ?string,
          flags: int,
          heldUntil: ?string,
          hwid: string,
          impressions: Impressions,
          lastError: ?LastError,
          nextRefreshAt: ?string,
          partial: bool,
          problem: ?string,
          revision: int,
          seed: ?Seed,
          sessionStartedAt: ?string,
          source: string,
          stale: bool,
          subscriptions: int,
          userId: string,
          version: string
        )

        # The caller may not make this call: SetUserId and SetAppState outside ControlGroups.
        error PermissionDenied (method: string)

        # Refresh failed; status is the failure's R11 status (0: nothing was received).
        error RefreshFailed (status: int, reason: string)

        # SetUserId past the rate one user may make it at; retry after that many seconds.
        error TooManyStateChanges (retryAfter: int)

        # SetUserId that the state directory cannot keep; nothing changed.
        error NotDurable (reason: string)

        # Listen keys past MaxListenKeys, in its units.
        error TooManyListenKeys (limit: int, held: int, requested: int)

        # A message over MaxLineBytes; the connection closes after this reply.
        error MessageTooLong (limit: int)

        # A message that is not a JSON object of a call.
        error InvalidMessage (reason: string)

        # A call came on a connection while Listen streamed: Listen ends with this reply, and the call is
        # answered after it.
        error ListenInterrupted ()

        """#

    /// The IDL of `org.varlink.service`, as the Varlink specification declares it.
    public static let serviceDescription = #"""
        # The Varlink service interface.
        interface org.varlink.service

        # Information about this service.
        method GetInfo() -> (
          vendor: string,
          product: string,
          version: string,
          url: string,
          interfaces: []string
        )

        # The description of an interface this service implements.
        method GetInterfaceDescription(interface: string) -> (description: string)

        # The interface is not served.
        error InterfaceNotFound (interface: string)

        # The interface has no such method.
        error MethodNotFound (method: string)

        # The method is not implemented.
        error MethodNotImplemented (method: string)

        # A parameter is missing or of the wrong type.
        error InvalidParameter (parameter: string)

        # The caller may not make this call.
        error PermissionDenied ()

        # The method streams its replies: call it with more.
        error ExpectedMore ()

        """#
}
