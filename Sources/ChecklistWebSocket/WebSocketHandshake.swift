import ChecklistWire

/// The server's side of the opening handshake (RFC 6455 section 4.2):
/// checks an upgrade request and makes the `101 Switching Protocols`
/// answer, or says which status refuses it (Protocol/WEBSOCKET.md). Pure.
public enum WebSocketHandshake {
    /// The one subprotocol the web port speaks: the binary protocol v1 as a byte stream.
    public static let subprotocol = "checklists.v1"

    /// Which `Origin`s may open a WebSocket.
    public struct OriginPolicy: Hashable, Sendable {
        /// Origins (`scheme://host[:port]`, compared without case) allowed
        /// besides the page's own, the one whose host and port are the
        /// request's `Host` (always allowed).
        public var allowed: [String]

        public init(allowed: [String] = []) {
            self.allowed = allowed.map { $0.lowercased() }
        }

        /// Whether a request with `origin` (nil: no `Origin` field, not a
        /// browser) to `host` (its `Host` field) is allowed.
        public func allows(origin: String?, host: String?) -> Bool {
            guard let origin = origin?.lowercased() else { return true }
            if allowed.contains(origin) { return true }
            guard let host = host?.lowercased() else { return false }
            for scheme in ["http://", "https://"] where origin.hasPrefix(scheme) {
                return origin.dropFirst(scheme.count) == host
            }
            return false
        }
    }

    /// Why an upgrade is refused: the HTTP status and a line for the body.
    public struct Refusal: Error, Hashable, Sendable, CustomStringConvertible {
        public let status: Int
        public let message: String
        /// Extra header lines (each ending in CRLF), e.g. `Sec-WebSocket-Version: 13`.
        public let extraFields: String
        /// Refused for its `Origin` (403), not for a malformed handshake.
        public var isOriginRefusal: Bool { status == 403 }
        public var description: String { "\(status): \(message)" }
    }

    /// Checks `head` (a request for the WebSocket path) and returns the
    /// `101` answer's bytes, or throws the refusal.
    public static func accept(_ head: HTTPRequestHead, origins: OriginPolicy) throws(Refusal) -> [UInt8] {
        func refuse(_ status: Int, _ message: String, _ extra: String = "") -> Refusal {
            Refusal(status: status, message: message, extraFields: extra)
        }
        guard head.method == "GET" else { throw refuse(405, "a WebSocket upgrade is a GET", "Allow: GET\r\n") }
        guard head.minorVersion >= 1 else { throw refuse(400, "a WebSocket upgrade needs HTTP/1.1") }
        guard head.fieldCount("host") == 1 else { throw refuse(400, "exactly one Host field is required") }
        guard head.tokens("upgrade").contains("websocket") else { throw refuse(400, "Upgrade: websocket is required") }
        guard head.tokens("connection").contains("upgrade") else { throw refuse(400, "Connection: Upgrade is required") }
        guard head.field("sec-websocket-version") == "13" else {
            throw refuse(426, "Sec-WebSocket-Version: 13 is required", "Sec-WebSocket-Version: 13\r\n")
        }
        guard head.fieldCount("sec-websocket-key") == 1, let key = head.field("sec-websocket-key"),
              Base64.decode(key)?.count == 16 else {
            throw refuse(400, "Sec-WebSocket-Key must be 16 bytes in base64")
        }
        guard origins.allows(origin: head.field("origin"), host: head.field("host")) else {
            throw refuse(403, "Origin \(head.field("origin") ?? "") is not allowed")
        }
        guard head.tokens("sec-websocket-protocol").contains(subprotocol) else {
            throw refuse(400, "Sec-WebSocket-Protocol must offer \(subprotocol)")
        }
        return response(accept: WebSocketAcceptKey.accept(for: key))
    }

    /// The `101 Switching Protocols` answer.
    public static func response(accept: String) -> [UInt8] {
        Array(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(accept)\r\nSec-WebSocket-Protocol: \(subprotocol)\r\n\r\n").utf8)
    }
}
