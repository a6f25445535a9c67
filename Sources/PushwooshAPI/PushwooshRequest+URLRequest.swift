import FlagsCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension PushwooshRequest {
    /// The Foundation request, with caching and cookies off.
    func urlRequest(timeout: Duration) -> URLRequest {
        var urlRequest = URLRequest(
            url: url, cachePolicy: .reloadIgnoringLocalAndRemoteCacheData, timeoutInterval: timeout.foundationBackstop)
        urlRequest.httpMethod = "POST"
        urlRequest.httpShouldHandleCookies = false
        for (name, value) in headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = Data(body)
        return urlRequest
    }
}

extension Duration {
    /// A URLSession timeout just above this duration, in whole seconds.
    ///
    /// The client enforces the real bound itself; Foundation's timers only back it up. On Linux a sub-second
    /// interval fires at once (seen with 0.3 s), so the backstop is whole seconds and at least two.
    var foundationBackstop: Double {
        max(1, seconds.rounded(.up)) + 1
    }
}
