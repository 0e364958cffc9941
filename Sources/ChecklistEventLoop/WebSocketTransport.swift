import ChecklistWebSocket

/// A web port's WebSocket settings (`TCPServer.Listener.webSocket`).
public struct WebSocketSettings: Sendable {
    /// The most payload bytes one client message may carry (close 1009 past it).
    public var maxMessageBytes: Int
    /// After this long without a byte from the client the server sends a
    /// Ping; after as long again without one it closes with 1001.
    public var pingInterval: Duration

    public init(maxMessageBytes: Int = WebSocketFrameDecoder.defaultMaxMessageBytes, pingInterval: Duration = .seconds(30)) {
        self.maxMessageBytes = maxMessageBytes
        self.pingInterval = pingInterval
    }
}

/// A connection's WebSocket layer after the upgrade: the frame decoder and
/// what the connection has said. Owned by one `SocketConnection`, on its loop
/// thread. Costs a few dozen bytes while idle: the decoder buffers only a
/// split header and a control frame's payload.
package final class WebSocketTransport {
    package let settings: WebSocketSettings
    package var decoder: WebSocketFrameDecoder
    /// Our Close frame is in the output: nothing more may follow it.
    package var closeSent = false
    /// When our last Ping went out, until input comes after it.
    package var pingSentAt: ContinuousClock.Instant?
    /// Input after the upgrade request, already in the buffer, still to be decoded.
    package var backlogUndecoded = true

    package init(settings: WebSocketSettings) {
        self.settings = settings
        self.decoder = WebSocketFrameDecoder(maxMessageBytes: settings.maxMessageBytes)
    }
}
