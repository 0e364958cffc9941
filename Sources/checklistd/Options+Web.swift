import ChecklistCommandLine
import ChecklistServer

/// The web port's options, kept together: `--web-port`,
/// `--web-allowed-origin`, `--web-ping-interval`, `--web-max-message`.
extension Options {
    static let web: [BoundOption<Options>] = [
        .value("--web-port", "PORT", """
            also serve the web app at http://HOST:PORT/ and the protocol
            over WebSocket at /ws (subprotocol checklists.v1), on --host
            (https and wss with --tls-cert; 0 picks a port);
            "checklistd: web on HOST:PORT" is printed before "listening on"
            """) { $0.configuration.webPort = try $1.integer() },
        .repeated("--web-allowed-origin", "ORIGIN", """
            another page origin (e.g. https://app.example.com) allowed to
            open /ws, beside the page's own, which always is; repeatable.
            Other origins are refused with 403
            """) {
            guard $1.text.hasPrefix("http://") || $1.text.hasPrefix("https://"), !$1.text.hasSuffix("/") else {
                throw $1.error("'\($1.text)' is not an origin like https://host[:port]")
            }
            $0.configuration.webAllowedOrigins.append($1.text)
        },
        .value("--web-ping-interval", "SECONDS", """
            ping a WebSocket client silent this long, close it (1001)
            when still silent as long again (default 30)
            """) { $0.configuration.webSocket.pingInterval = try $1.duration(positive: true)! },
        .value("--web-max-message", "BYTES", "largest WebSocket message a client may send (default 16777216)") {
            $0.configuration.webSocket.maxMessageBytes = try $1.integer(min: 1024, max: 1 << 30)
        },
    ]
}
