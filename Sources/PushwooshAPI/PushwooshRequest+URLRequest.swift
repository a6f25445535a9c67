import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension PushwooshRequest {
    /// The Foundation request, with caching and cookies off.
    func urlRequest(timeout: Duration) -> URLRequest {
        var urlRequest = URLRequest(
            url: url, cachePolicy: .reloadIgnoringLocalAndRemoteCacheData, timeoutInterval: timeout.seconds)
        urlRequest.httpMethod = "POST"
        urlRequest.httpShouldHandleCookies = false
        for (name, value) in headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = Data(body)
        return urlRequest
    }
}

extension Duration {
    /// The duration in seconds, for Foundation's `TimeInterval`.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
