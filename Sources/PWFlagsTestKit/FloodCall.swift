/// One kind of call a flood makes, on one of the daemon's surfaces: what is sent and how the client behaves.
///
/// The catalogue names every kind the memory checks make (`CallMemoryTests`, `pwflags-bench --kept-per-call`,
/// the call soak): every method of the line protocol and of the D-Bus interface, the OFREP requests, and the
/// calls that are refused, that fail, or whose client is gone before the answer.
public struct FloodCall: Sendable, CustomStringConvertible, Hashable {
    public enum Surface: String, Sendable, Hashable {
        case line, bus, ofrep, varlink
    }

    /// How the client makes its calls.
    public enum Manner: Sendable, Hashable {
        /// One connection, `window` calls written ahead of their answers.
        case pipelined
        /// A connection for each call: connect, call, read the answer, close.
        case connectionEach
        /// A connection for each call, closed as soon as the call is written: the answer finds nobody.
        case hangUp
    }

    public let surface: Surface
    /// The name `--flood` and the test's arguments use: `line.refresh`, `bus.LogImpression`, `ofrep.bulk`.
    public let name: String
    public let manner: Manner
    /// Whether each call writes (and syncs) a file of the state directory: such kinds take far longer a call.
    public let writesState: Bool
    /// The line protocol's request line, the Varlink call, or the OFREP request's bytes; `%N%` in it reads 0 and 1 by turns (a
    /// user id that changes at every call).
    let payload: String
    /// The bus call's interface, member and signature (`s`, `sb` or empty).
    let bus: (interface: String, member: String, signature: String, arguments: [String])?

    public var description: String { name }

    public static func == (left: FloodCall, right: FloodCall) -> Bool { left.name == right.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    private init(
        _ surface: Surface, _ name: String, manner: Manner = .pipelined, writesState: Bool = false,
        payload: String = "", bus: (interface: String, member: String, signature: String, arguments: [String])? = nil
    ) {
        self.surface = surface
        self.name = surface.rawValue + "." + name
        self.manner = manner
        self.writesState = writesState
        self.payload = payload
        self.bus = bus
    }

    static func line(
        _ name: String, _ method: String, _ params: String = "{}", manner: Manner = .pipelined,
        writesState: Bool = false
    ) -> FloodCall {
        let request = #"{"jsonrpc":"2.0","id":7,"method":"\#(method)","params":\#(params)}"#
        return FloodCall(.line, name, manner: manner, writesState: writesState, payload: request)
    }

    static func bus(
        _ member: String, _ signature: String = "", _ arguments: [String] = [],
        interface: String = "io.github.pwflagsd.Flags1", name: String? = nil
    ) -> FloodCall {
        let method = (interface: interface, member: member, signature: signature, arguments: arguments)
        return FloodCall(.bus, name ?? member, bus: method)
    }

    static func varlink(
        _ name: String, _ method: String, _ parameters: String = "{}", more: Bool = false,
        manner: Manner = .pipelined
    ) -> FloodCall {
        let call = #"{"method":"\#(method)","parameters":\#(parameters)\#(more ? #","more":true"# : "")}"#
        return FloodCall(.varlink, name, manner: manner, payload: call)
    }

    static func ofrep(_ name: String, _ request: String, manner: Manner = .pipelined) -> FloodCall {
        FloodCall(.ofrep, name, manner: manner, payload: request)
    }

    /// Every kind of call on the line socket, the bus, the Varlink socket and the OFREP listener that a local
    /// program can make.
    /// `key` is a flag the daemon serves.
    public static func catalogue(key: String = "new_checkout") -> [FloodCall] {
        let keyParams = #"{"key":"\#(key)"}"#
        return [
            .line("get", "get", keyParams),
            .line("getAll", "getAll"),
            .line("isEnabled", "isEnabled", keyParams),
            .line("refresh", "refresh"),
            .line("logImpression", "logImpression", keyParams),
            .line("setUserId", "setUserId", #"{"userId":"flood-user"}"#),
            .line("setUserIdChanging", "setUserId", #"{"userId":"flood-user-%N%"}"#, writesState: true),
            .line("setAppState", "setAppState", #"{"state":"foreground"}"#),
            .line("pushRegistered", "pushRegistered"),
            .line("status", "status"),
            .line("explain", "explain", keyParams),
            .line("metrics", "metrics"),
            .line("listOverrides", "listOverrides"),
            .line("setOverride", "setOverride", #"{"key":"flood_override","enabled":true}"#),
            .line("clearOverride", "clearOverride", #"{"key":"flood_override"}"#),
            .line("unknownMethod", "noSuchMethod"),
            .line("badParams", "get", #"{"key":5}"#),
            .line("listen", "listen", #"{"keys":["\#(key)"]}"#, manner: .connectionEach),
            .line("refreshHangUp", "refresh", manner: .hangUp),
            .line("logImpressionHangUp", "logImpression", keyParams, manner: .hangUp),
            .bus("IsEnabled", "sb", [key, "false"]),
            .bus("Get", "s", [key]),
            .bus("GetAll"),
            .bus("GetStatus"),
            .bus("Explain", "s", [key]),
            .bus("Refresh"),
            .bus("LogImpression", "s", [key]),
            .bus("SetUserId", "s", ["flood-user"]),
            .bus("SetAppState", "s", ["foreground"]),
            .bus("SetAppState", "s", ["sideways"], name: "SetAppStateInvalid"),
            .bus(
                "GetAll", "s", ["io.github.pwflagsd.Flags1"], interface: "org.freedesktop.DBus.Properties",
                name: "Properties.GetAll"),
            .bus("NoSuchMethod"),
            .varlink("Get", "io.github.pwflagsd.Flags.Get", keyParams),
            .varlink("GetAll", "io.github.pwflagsd.Flags.GetAll"),
            .varlink("Refresh", "io.github.pwflagsd.Flags.Refresh"),
            .varlink("LogImpression", "io.github.pwflagsd.Flags.LogImpression", keyParams),
            .varlink("SetUserId", "io.github.pwflagsd.Flags.SetUserId", #"{"userId":"flood-user"}"#),
            .varlink("SetAppState", "io.github.pwflagsd.Flags.SetAppState", #"{"state":"foreground"}"#),
            .varlink("Explain", "io.github.pwflagsd.Flags.Explain", keyParams),
            .varlink("GetStatus", "io.github.pwflagsd.Flags.GetStatus"),
            .varlink("GetInfo", "org.varlink.service.GetInfo"),
            .varlink(
                "GetInterfaceDescription", "org.varlink.service.GetInterfaceDescription",
                #"{"interface":"io.github.pwflagsd.Flags"}"#),
            .varlink("InvalidParameter", "io.github.pwflagsd.Flags.Get", #"{"key":5}"#),
            .varlink("MethodNotFound", "io.github.pwflagsd.Flags.NoSuchMethod"),
            .varlink("Listen", "io.github.pwflagsd.Flags.Listen", more: true, manner: .connectionEach),
            .varlink("RefreshHangUp", "io.github.pwflagsd.Flags.Refresh", manner: .hangUp),
            .ofrep("one", HTTPClient.post("/ofrep/v1/evaluate/flags/\(key)")),
            .ofrep("bulk", HTTPClient.post("/ofrep/v1/evaluate/flags")),
            .ofrep("missing", HTTPClient.post("/ofrep/v1/evaluate/flags/no_such_flag")),
            .ofrep("badRequest", HTTPClient.post("/ofrep/v1/evaluate/flags", body: "{nope")),
            .ofrep("notFound", "GET /nope HTTP/1.1\r\nHost: localhost\r\n\r\n"),
            .ofrep("oneHangUp", HTTPClient.post("/ofrep/v1/evaluate/flags/\(key)"), manner: .hangUp),
        ]
    }

    /// The kind named `name` in the catalogue.
    public static func named(_ name: String, key: String = "new_checkout") -> FloodCall? {
        catalogue(key: key).first { $0.name == name }
    }
}
