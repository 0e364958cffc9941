import ChecklistWebSocket

/// What the web port counts (Protocol/WEBSOCKET.md): upgrades, refused
/// upgrades, and WebSocket connections the server closed for breaking
/// RFC 6455, by the close code it sent. `ServerStatistics.webSocketEvents`
/// holds the counts; STATS reports them as `StatsReport.WebSocketStatus`.
public enum WebSocketEvent: Sendable, Hashable, CaseIterable {
    /// An upgrade accepted (`101 Switching Protocols`).
    case upgrade
    /// An upgrade request refused as malformed (400, 405, 426).
    case handshakeRefused
    /// An upgrade request refused for its `Origin` (403).
    case originRefused
    /// Closed with 1002: unmasked, reserved bits or opcode, a fragmented or
    /// oversized control frame, a stray continuation, a bad close code.
    case closedProtocolError
    /// Closed with 1003: a text frame.
    case closedUnsupportedData
    /// Closed with 1007: a close reason that is not UTF-8.
    case closedInvalidPayload
    /// Closed with 1009: a message over the limit.
    case closedMessageTooBig
    /// Closed with 1001 after a ping went unanswered.
    case pingTimeout

    /// The event of a connection failed with close `code`.
    init(closedWith code: WebSocketCloseCode) {
        switch code {
        case .unsupportedData: self = .closedUnsupportedData
        case .invalidPayload: self = .closedInvalidPayload
        case .messageTooBig: self = .closedMessageTooBig
        default: self = .closedProtocolError
        }
    }
}

/// The live WebSocket counters (relaxed atomics, any loop).
package final class WebSocketCounters: Sendable {
    private let counters: [WebSocketEvent: ServerCounters.Counter] =
        Dictionary(uniqueKeysWithValues: WebSocketEvent.allCases.map { ($0, ServerCounters.Counter()) })

    /// Counts one `event`.
    package func count(_ event: WebSocketEvent) { counters[event]?.add(1) }

    /// The counts so far, events never seen left out.
    package func snapshot() -> [WebSocketEvent: UInt64] {
        counters.compactMapValues { counter in
            let count = counter.load()
            return count > 0 ? count : nil
        }
    }
}
