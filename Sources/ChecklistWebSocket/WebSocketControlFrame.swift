/// A whole control frame the decoder read (its payload unmasked).
public enum WebSocketControlFrame: Hashable, Sendable {
    case ping([UInt8])
    case pong([UInt8])
    /// The peer's Close: its code and reason, or nil for an empty payload.
    case close(WebSocketCloseCode?, reason: String)
}
