#if canImport(Glibc)
    public import Glibc
#endif

extension UnixSocketAddress {
    /// `/path` or `@abstract` (the form of `$NOTIFY_SOCKET`) as `sockaddr_un` bytes and the length to pass with
    /// them; nil for anything else (such as a `vsock:` address) or a name too long for `sun_path`.
    ///
    /// A path needs its terminating zero; an abstract name starts with a zero byte and is exactly its bytes.
    public static func rawAddress(_ text: String) -> (bytes: [UInt8], length: socklen_t)? {
        var path = Array(text.utf8)
        guard path.count >= 2, path[0] == UInt8(ascii: "/") || path[0] == UInt8(ascii: "@") else { return nil }
        let abstract = path[0] == UInt8(ascii: "@")
        if abstract { path[0] = 0 }
        var address = sockaddr_un()
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count + (abstract ? 0 : 1) <= capacity else { return nil }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: path) }
        let length = MemoryLayout<sa_family_t>.size + path.count + (abstract ? 0 : 1)
        let bytes = withUnsafeBytes(of: &address) { Array($0) }
        return (bytes, socklen_t(length))
    }
}
