import ChecklistWebSocket

/// What the web port saw (all zero without one): upgrades, refusals, and
/// WebSocket connections the server closed for breaking RFC 6455, by the
/// close code it sent (Protocol/WEBSOCKET.md).
public struct WebSocketStatistics: Sendable, Hashable {
    /// Upgrades accepted (`101 Switching Protocols`).
    public var upgrades: UInt64 = 0
    /// Upgrade requests refused as malformed (400, 405, 426).
    public var handshakeRefusals: UInt64 = 0
    /// Upgrade requests refused for their `Origin` (403).
    public var originRefusals: UInt64 = 0
    /// Closed with 1002: unmasked, reserved bits or opcode, a fragmented or
    /// oversized control frame, a stray continuation, a bad close code.
    public var closedProtocolError: UInt64 = 0
    /// Closed with 1003: a text frame.
    public var closedUnsupportedData: UInt64 = 0
    /// Closed with 1007: a close reason that is not UTF-8.
    public var closedInvalidPayload: UInt64 = 0
    /// Closed with 1009: a message over the limit.
    public var closedMessageTooBig: UInt64 = 0
    /// Closed with 1001 after a ping went unanswered.
    public var pingTimeouts: UInt64 = 0

    public init() {}
}

/// The live WebSocket counters (relaxed atomics, any loop).
package final class WebSocketCounters: Sendable {
    package let upgrades = ServerCounters.Counter()
    package let handshakeRefusals = ServerCounters.Counter()
    package let originRefusals = ServerCounters.Counter()
    package let protocolErrors = ServerCounters.Counter()
    package let unsupportedData = ServerCounters.Counter()
    package let invalidPayload = ServerCounters.Counter()
    package let messagesTooBig = ServerCounters.Counter()
    package let pingTimeouts = ServerCounters.Counter()

    /// Counts a connection failed with `code`.
    package func countClose(_ code: WebSocketCloseCode) {
        switch code {
        case .unsupportedData: unsupportedData.add(1)
        case .invalidPayload: invalidPayload.add(1)
        case .messageTooBig: messagesTooBig.add(1)
        default: protocolErrors.add(1)
        }
    }

    package func snapshot() -> WebSocketStatistics {
        var s = WebSocketStatistics()
        s.upgrades = upgrades.load()
        s.handshakeRefusals = handshakeRefusals.load()
        s.originRefusals = originRefusals.load()
        s.closedProtocolError = protocolErrors.load()
        s.closedUnsupportedData = unsupportedData.load()
        s.closedInvalidPayload = invalidPayload.load()
        s.closedMessageTooBig = messagesTooBig.load()
        s.pingTimeouts = pingTimeouts.load()
        return s
    }
}
