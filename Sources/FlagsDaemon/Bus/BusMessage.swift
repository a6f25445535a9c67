import CSystemd
import FlagsCore

#if canImport(Glibc)
    import Glibc
#endif

/// One sd-bus message the daemon holds a reference to: a call it answers later, a reply or a signal it
/// writes. Every `sd_bus_message_*` call of the daemon is here; D-Bus type codes are written out as the
/// specification's letters.
///
/// Not `Sendable`: sd-bus counts a message's references without atomics, so a message never leaves the bus
/// thread (a call answered later waits there in the loop's table of pending calls, under an id).
final class BusMessage {
    let raw: OpaquePointer

    /// Takes over the reference `raw` came with.
    init(owning raw: OpaquePointer) {
        self.raw = raw
    }

    /// Takes a reference of its own to `raw`, which sd-bus lends to a handler.
    init(retaining raw: OpaquePointer) {
        self.raw = sd_bus_message_ref(raw)
    }

    deinit {
        sd_bus_message_unref(raw)
    }

    /// The D-Bus error name of an error reply; nil for anything else.
    var errorName: String? {
        guard sd_bus_message_is_method_error(raw, nil) > 0, let error = sd_bus_message_get_error(raw) else {
            return nil
        }
        return error.pointee.name.map { String(cString: $0) }
    }

    /// The unique name of the connection that sent this message (`:1.42`).
    var sender: String? { sd_bus_message_get_sender(raw).map { String(cString: $0) } }

    /// The method called, for a call.
    var member: String? { sd_bus_message_get_member(raw).map { String(cString: $0) } }

    /// A new reply to this call.
    func reply() -> BusMessage? {
        var reply: OpaquePointer?
        guard sd_bus_message_new_method_return(raw, &reply) >= 0, let reply else { return nil }
        return BusMessage(owning: reply)
    }

    /// A new error reply to this call: `name` a D-Bus error name, `text` for people.
    func errorReply(name: String, text: String) -> BusMessage? {
        var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
        defer { sd_bus_error_free(&error) }
        sd_bus_error_set(&error, name, text)
        var reply: OpaquePointer?
        guard sd_bus_message_new_method_error(raw, &reply, &error) >= 0, let reply else { return nil }
        return BusMessage(owning: reply)
    }

    // MARK: Reading the arguments of a call

    /// The next argument, a string.
    func readString() -> String? {
        var value: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(raw, CChar(UInt8(ascii: "s")), &value) > 0, let value else { return nil }
        return String(cString: value)
    }

    /// The next argument, a boolean.
    func readBool() -> Bool? {
        var value: Int32 = 0
        guard sd_bus_message_read_basic(raw, CChar(UInt8(ascii: "b")), &value) > 0 else { return nil }
        return value != 0
    }

    /// The next argument, an unsigned 32-bit integer.
    func readUInt32() -> UInt32? {
        var value: UInt32 = 0
        guard sd_bus_message_read_basic(raw, CChar(UInt8(ascii: "u")), &value) > 0 else { return nil }
        return value
    }

    /// Reads the arguments from the first again.
    func rewind() {
        _ = sd_bus_message_rewind(raw, 1)
    }

    // MARK: Writing

    func append(_ value: String) {
        var value = value
        value.withUTF8 { append(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// A string from its UTF-8 bytes (valid UTF-8, as every Swift string and the flags' encoded JSON are), copied
    /// into the message once: not measured, validated and copied again as `sd_bus_message_append_basic` does,
    /// which was most of the time a 16 MB `GetAll` answer took. D-Bus strings end at a NUL: bytes holding one
    /// go that way, and end at their first NUL as they always did.
    func append(utf8 bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, memchr(base, 0, bytes.count) == nil else {
            let text = String(decoding: bytes, as: UTF8.self)
            _ = text.withCString { sd_bus_message_append_basic(raw, CChar(UInt8(ascii: "s")), $0) }
            return
        }
        var space: UnsafeMutablePointer<CChar>?
        guard sd_bus_message_append_string_space(raw, bytes.count, &space) >= 0, let space else { return }
        UnsafeMutableRawPointer(space).copyMemory(from: base, byteCount: bytes.count)
    }

    /// A string from bytes, as `append(utf8:)`.
    func append(utf8 bytes: [UInt8]) {
        bytes.withUnsafeBytes { append(utf8: $0) }
    }

    func append(_ value: Bool) {
        var bit: Int32 = value ? 1 : 0
        _ = sd_bus_message_append_basic(raw, CChar(UInt8(ascii: "b")), &bit)
    }

    func append(_ value: Int32) {
        var value = value
        _ = sd_bus_message_append_basic(raw, CChar(UInt8(ascii: "i")), &value)
    }

    func append(_ value: UInt64) {
        var value = value
        _ = sd_bus_message_append_basic(raw, CChar(UInt8(ascii: "t")), &value)
    }

    func append(_ value: Double) {
        var value = value
        _ = sd_bus_message_append_basic(raw, CChar(UInt8(ascii: "d")), &value)
    }

    /// Writes what `body` writes inside a container: `type` is `a`, `r` (a struct), `e` (a dictionary entry) or
    /// `v`, and `contents` the signature inside.
    func container(_ type: Character, _ contents: String, _ body: () -> Void) {
        _ = sd_bus_message_open_container(raw, CChar(type.asciiValue ?? 0), contents)
        body()
        _ = sd_bus_message_close_container(raw)
    }

    /// `a{sv}`: each member of `members` as a string key and a variant, in key order. D-Bus has no null: a
    /// member whose value is `null` is left out, as a typed read takes `null` for absent (docs/dbus.md).
    func appendDictionary(_ members: [String: JSONValue]) {
        container("a", "{sv}") {
            for key in members.keys.sorted() where members[key]?.isNull == false {
                container("e", "sv") {
                    append(key)
                    appendVariant(members[key] ?? .null)
                }
            }
        }
    }

    /// A JSON value as a variant: a string `s`, a number `d`, a boolean `b`, an object `a{sv}`, an array `av`;
    /// a `null` element of an array travels as an empty `av` (the flag's JSON text tells it from `[]`).
    func appendVariant(_ value: JSONValue) {
        switch value {
        case .string(let string): container("v", "s") { append(string) }
        case .number(let number): container("v", "d") { append(number) }
        case .bool(let bool): container("v", "b") { append(bool) }
        case .object(let members): container("v", "a{sv}") { appendDictionary(members) }
        case .array(let elements):
            container("v", "av") { container("a", "v") { for element in elements { appendVariant(element) } } }
        case .null: container("v", "av") { container("a", "v") {} }
        }
    }

    /// The serial sd-bus gave this message when it was sent; 0 before.
    var cookie: UInt64 {
        var cookie: UInt64 = 0
        return sd_bus_message_get_cookie(raw, &cookie) >= 0 ? cookie : 0
    }

    /// For a reply: the serial of the call it answers; 0 for anything else.
    var replyCookie: UInt64 {
        var cookie: UInt64 = 0
        return sd_bus_message_get_reply_cookie(raw, &cookie) >= 0 ? cookie : 0
    }
}
