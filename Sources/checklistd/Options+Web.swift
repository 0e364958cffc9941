import ChecklistServer

/// The web port's options, kept together: `--web-port`,
/// `--web-allowed-origin`, `--web-ping-interval`, `--web-max-message`.
extension Options {
    static let webUsage = """
      --web-port PORT        also serve the web app at http://HOST:PORT/ and the protocol
                             over WebSocket at /ws (subprotocol checklists.v1), on --host
                             (https and wss with --tls-cert; 0 picks a port);
                             "checklistd: web on HOST:PORT" is printed before "listening on"
      --web-allowed-origin ORIGIN  another page's origin (e.g. https://app.example.com)
                             allowed to open /ws besides the page's own; repeatable
                             (other origins are refused with 403)
      --web-ping-interval SECONDS  ping a WebSocket client silent this long, close it (1001)
                             when still silent as long again (default 30)
      --web-max-message BYTES  largest WebSocket message a client may send (default 16777216)
    """

    /// Applies a web port option; false if `flag` is not one.
    mutating func applyWebOption(_ flag: String, _ cursor: inout ArgumentCursor) throws -> Bool {
        switch flag {
        case "--web-port": configuration.webPort = try cursor.number(flag, UInt16.self)
        case "--web-allowed-origin":
            let origin = try cursor.value(flag)
            guard origin.hasPrefix("http://") || origin.hasPrefix("https://"), !origin.hasSuffix("/") else {
                throw UsageError(description: "\(flag): '\(origin)' is not an origin like https://host[:port]")
            }
            configuration.webAllowedOrigins.append(origin)
        case "--web-ping-interval":
            let seconds = try cursor.seconds(flag)
            guard seconds > 0 else { throw UsageError(description: "--web-ping-interval must be more than 0") }
            configuration.webSocket.pingInterval = .milliseconds(Int64((seconds * 1000).rounded(.up)))
        case "--web-max-message":
            configuration.webSocket.maxMessageBytes = try cursor.number(flag, Int.self, min: 1024, max: 1 << 30)
        default: return false
        }
        return true
    }
}
