import ChecklistEventLoop
import ChecklistWebSocket

/// The web port (`checklistd --web-port`): HTTP/1.1 until a client asks
/// for `/ws`. `GET /` and the page's files are answered from `WebAssets`
/// (keep-alive); `GET /ws` with a valid upgrade (RFC 6455 section 4.2, the
/// `checklists.v1` subprotocol, an allowed `Origin`) is answered `101`, and
/// the connection becomes a WebSocket carrying the binary protocol, served
/// by the handler `makeProtocolHandler` makes, exactly as on a TCP port.
/// A refused upgrade is answered with its status and counted (STATS,
/// /metrics). Protocol/WEBSOCKET.md specifies all of it.
///
/// Bounds: a request head of at most `maxRequestBytes`; no request bodies;
/// a connection is closed when a whole request head has not come within
/// `idleTimeout` of its connecting or of the previous request (however
/// slowly its bytes trickle in).
final class WebPortHandler: SocketConnectionHandler {
    static let maxRequestBytes = 16 << 10
    static let idleTimeout: Duration = .seconds(15)
    static let socketPath = "/ws"

    private let settings: WebSocketSettings
    private let origins: WebSocketHandshake.OriginPolicy
    private let makeProtocolHandler: (SocketConnection) -> any SocketConnectionHandler
    /// Since when the connection owes us a whole request head.
    private var waitingSince = ContinuousClock.now

    init(settings: WebSocketSettings, origins: WebSocketHandshake.OriginPolicy,
         makeProtocolHandler: @escaping (SocketConnection) -> any SocketConnectionHandler) {
        self.settings = settings
        self.origins = origins
        self.makeProtocolHandler = makeProtocolHandler
    }

    func connectionActive(_ connection: SocketConnection) {
        connection.maxInputBytes = Self.maxRequestBytes
        if connection.isOverConnectionLimit {
            respond(connection, status: 503, body: "too many connections\n", keepAlive: false)
        }
    }

    func connectionReadable(_ connection: SocketConnection, _ input: UnsafeRawBufferPointer) -> Int {
        var consumed = 0
        while connection.isOpen && !connection.isWebSocket {
            let parsed: (head: HTTPRequestHead, count: Int)?
            do throws(HTTPRequestHead.ParseError) {
                parsed = try HTTPRequestHead.parse(UnsafeRawBufferPointer(rebasing: input[consumed...]), maxBytes: Self.maxRequestBytes)
            } catch {
                respond(connection, status: error.status, body: error.message + "\n", keepAlive: false)
                return input.count
            }
            guard let (head, count) = parsed else { break }
            consumed += count
            waitingSince = connection.eventLoop.now
            handle(head, connection)
        }
        return consumed  // after an upgrade, what follows is frames: the connection decodes them
    }

    private func handle(_ head: HTTPRequestHead, _ connection: SocketConnection) {
        if head.field("content-length").map({ $0 != "0" }) ?? false || head.field("transfer-encoding") != nil {
            respond(connection, status: 400, body: "no request bodies here\n", keepAlive: false)
            return
        }
        if head.path == Self.socketPath {
            upgrade(head, connection)
            return
        }
        guard head.method == "GET" || head.method == "HEAD" else {
            respond(connection, status: 405, body: "only GET\n", keepAlive: false, extraFields: "Allow: GET, HEAD\r\n")
            return
        }
        guard let file = WebAssets.file(at: head.path) else {
            respond(connection, status: 404, body: "not found\n", keepAlive: head.keepsAlive)
            return
        }
        respond(connection, status: 200, body: file.bytes, contentType: file.contentType, keepAlive: head.keepsAlive,
                headOnly: head.method == "HEAD")
    }

    private func upgrade(_ head: HTTPRequestHead, _ connection: SocketConnection) {
        let answer: [UInt8]
        do throws(WebSocketHandshake.Refusal) {
            answer = try WebSocketHandshake.accept(head, origins: origins)
        } catch {
            connection.countWebRefusal(origin: error.isOriginRefusal)
            respond(connection, status: error.status, body: error.message + "\n", keepAlive: false, extraFields: error.extraFields)
            return
        }
        connection.write(answer)
        connection.upgradeToWebSocket(settings: settings, handler: makeProtocolHandler(connection))
    }

    func connectionTick(_ connection: SocketConnection, now: ContinuousClock.Instant) {
        if now - waitingSince >= Self.idleTimeout { connection.close() }
    }

    private func respond(_ connection: SocketConnection, status: Int, body: String, keepAlive: Bool, extraFields: String = "") {
        respond(connection, status: status, body: Array(body.utf8), contentType: "text/plain; charset=utf-8",
                keepAlive: keepAlive, extraFields: extraFields)
    }

    private func respond(_ connection: SocketConnection, status: Int, body: [UInt8], contentType: String, keepAlive: Bool,
                         headOnly: Bool = false, extraFields: String = "") {
        let head = "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\nContent-Type: \(contentType)\r\n"
            + "Content-Length: \(body.count)\r\nCache-Control: no-cache\r\nX-Content-Type-Options: nosniff\r\n"
            + extraFields + (keepAlive ? "" : "Connection: close\r\n") + "\r\n"
        connection.write(Array(head.utf8) + (headOnly ? [] : body))
        if !keepAlive { connection.close() }
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 426: "Upgrade Required"
        case 431: "Request Header Fields Too Large"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Error"
        }
    }
}
