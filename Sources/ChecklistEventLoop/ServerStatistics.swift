import Synchronization

/// A snapshot of a server's counters.
public struct ServerStatistics: Sendable, Hashable {
    /// Connections being served now (over-limit ones excluded).
    public var connectionsOpen: Int
    /// Connections accepted and served since start.
    public var connectionsTotal: UInt64
    /// Connections accepted beyond `maxConnections` and turned away.
    public var connectionsRejected: UInt64
    /// Connections aborted because their pending output passed `maxOutputBytes`.
    public var connectionsDroppedForOutput: UInt64
    /// Times a connection stopped being read because its pending output
    /// passed the high-water mark (back-pressure).
    public var readPauses: UInt64
    /// Bytes read from and written to sockets.
    public var bytesIn: UInt64
    public var bytesOut: UInt64
    /// TLS handshakes completed on the TLS ports (0 without one).
    public var tlsHandshakes: UInt64 = 0
    /// Connections closed by their TLS layer, by reason (a reason absent:
    /// none). STATS reports them as `StatsReport.TLSStatus`.
    public var tlsFailures: [TLSConnectionFailure.Reason: UInt64] = [:]
    /// What the web port saw, by event (an event absent: none).
    public var webSocketEvents: [WebSocketEvent: UInt64] = [:]
}

/// The live counters: relaxed atomics, cheap to bump from any loop. The
/// per-byte counters are kept per loop (each loop adds only to its own, so
/// hot counters never bounce between cores) and summed by `snapshot`.
package final class ServerCounters: Sendable {
    package let connectionsOpen = Atomic<Int>(0)
    package let connectionsTotal = Atomic<UInt64>(0)
    package let connectionsRejected = Atomic<UInt64>(0)
    /// Over-limit connections still being turned away (bounded separately).
    package let rejectionsInFlight = Atomic<Int>(0)
    package let droppedForOutput = Counter()
    package let readPauses = Counter()
    /// Indexed by `EventLoop.index`.
    package let traffic: [Traffic]
    package let tlsHandshakes = Counter()
    package let webSocket = WebSocketCounters()
    private let tlsFailures: [TLSConnectionFailure.Reason: Counter] = Dictionary(uniqueKeysWithValues: [
        TLSConnectionFailure.Reason.notTLS, .handshakeFailed, .handshakeTruncated, .handshakeTimeout, .recordError,
    ].map { ($0, Counter()) })

    /// Counts one connection closed by its TLS layer.
    package func countTLSFailure(_ reason: TLSConnectionFailure.Reason) {
        tlsFailures[reason]?.add(1)
    }

    package init(loops: Int) {
        traffic = (0..<loops).map { _ in Traffic() }
    }

    /// Bytes moved by one loop.
    package final class Traffic: Sendable {
        package let bytesIn = Counter()
        package let bytesOut = Counter()
    }

    /// A monotonically increasing relaxed counter.
    package final class Counter: Sendable {
        private let value = Atomic<UInt64>(0)
        package func add(_ amount: Int) { value.wrappingAdd(UInt64(amount), ordering: .relaxed) }
        package func load() -> UInt64 { value.load(ordering: .relaxed) }
    }

    package func snapshot() -> ServerStatistics {
        ServerStatistics(
            connectionsOpen: connectionsOpen.load(ordering: .relaxed),
            connectionsTotal: connectionsTotal.load(ordering: .relaxed),
            connectionsRejected: connectionsRejected.load(ordering: .relaxed),
            connectionsDroppedForOutput: droppedForOutput.load(),
            readPauses: readPauses.load(),
            bytesIn: traffic.reduce(0) { $0 + $1.bytesIn.load() },
            bytesOut: traffic.reduce(0) { $0 + $1.bytesOut.load() },
            tlsHandshakes: tlsHandshakes.load(),
            tlsFailures: tlsFailures.compactMapValues { counter in
                let count = counter.load()
                return count > 0 ? count : nil
            },
            webSocketEvents: webSocket.snapshot())
    }
}
