import ChecklistEventLoop
/// A minimal HTTP/1.x responder for Prometheus scrapes: one request per
/// connection, `GET /metrics` (or `GET /`) answered with the figures of
/// STATS in the text exposition format, then the connection is closed.
/// Anything else gets a short error status. Runs on the server's event
/// loops as one more `SocketConnectionHandler` (on its own listening socket).
///
/// Bounds: the request head may be at most `maxRequestBytes`; a client that
/// has not sent a whole head after `headTimeout` is closed.
final class MetricsHTTPHandler: SocketConnectionHandler {
    static let maxRequestBytes = 8192
    static let headTimeout: Duration = .seconds(10)

    private let metrics: ServerMetrics

    init(metrics: ServerMetrics) {
        self.metrics = metrics
    }

    func connectionActive(_ connection: SocketConnection) {
        connection.maxInputBytes = Self.maxRequestBytes
        if connection.isOverConnectionLimit {
            respond(connection, status: "503 Service Unavailable", body: "too many metrics connections\n")
        }
    }

    func connectionReadable(_ connection: SocketConnection, _ input: UnsafeRawBufferPointer) -> Int {
        guard let headEnd = Self.endOfHead(in: input) else {
            if input.count >= Self.maxRequestBytes {
                respond(connection, status: "431 Request Header Fields Too Large", body: "request head too large\n")
                return input.count
            }
            return 0
        }
        let head = String(decoding: UnsafeRawBufferPointer(rebasing: input[..<headEnd]), as: UTF8.self)
        let requestLine = head.split(separator: "\r\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let parts = requestLine.split(separator: " ")
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else {
            respond(connection, status: "400 Bad Request", body: "bad request line\n")
            return input.count
        }
        guard parts[0] == "GET" || parts[0] == "HEAD" else {
            respond(connection, status: "405 Method Not Allowed", body: "only GET\n", extraHeaders: "Allow: GET, HEAD\r\n")
            return input.count
        }
        let path = parts[1].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard path == "/metrics" || path == "/" else {
            respond(connection, status: "404 Not Found", body: "try /metrics\n")
            return input.count
        }
        let body = PrometheusText.render(metrics.report(), cache: metrics.cacheStatus(), refusals: metrics.accessRefusals())
        respond(connection, status: "200 OK", body: body, contentType: PrometheusText.contentType,
                headOnly: parts[0] == "HEAD")
        return input.count
    }

    func connectionInputClosed(_ connection: SocketConnection) { connection.close() }

    func connectionTick(_ connection: SocketConnection, now: ContinuousClock.Instant) {
        if now - connection.connectedAt >= Self.headTimeout { connection.close() }
    }

    private func respond(_ connection: SocketConnection, status: String, body: String,
                         contentType: String = "text/plain; charset=utf-8", extraHeaders: String = "",
                         headOnly: Bool = false) {
        let head = "HTTP/1.1 \(status)\r\nContent-Type: \(contentType)\r\nContent-Length: \(body.utf8.count)\r\n"
            + extraHeaders + "Connection: close\r\n\r\n"
        connection.write(Array(head.utf8) + (headOnly ? [] : Array(body.utf8)))
        connection.close()
    }

    /// The index just past the blank line (`\r\n\r\n`) ending the head, if it is in.
    static func endOfHead(in input: UnsafeRawBufferPointer) -> Int? {
        guard input.count >= 4 else { return nil }
        for i in 3..<input.count where input[i] == 0x0A && input[i - 1] == 0x0D && input[i - 2] == 0x0A && input[i - 3] == 0x0D {
            return i + 1
        }
        return nil
    }
}
