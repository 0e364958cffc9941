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
    /// TLS handshakes completed, and TLS connections closed by the TLS layer.
    public var tls = TLSStatistics()
    /// What the web port saw (WebSocketStatistics.swift).
    public var webSocket = WebSocketStatistics()
}

/// What the TLS ports saw (all zero without one). Each failure closed its
/// connection (`TLSConnectionFailure.Reason`).
public struct TLSStatistics: Sendable, Hashable {
    /// Handshakes completed.
    public var handshakes: UInt64 = 0
    /// Connections whose first byte was not a TLS handshake record (plaintext on the TLS port).
    public var notTLS: UInt64 = 0
    /// Handshakes that failed (garbage, no common version or cipher, a bad or missing client certificate).
    public var handshakeFailures: UInt64 = 0
    /// Peers that closed or reset the connection mid-handshake.
    public var handshakesTruncated: UInt64 = 0
    /// Handshakes that did not complete in time.
    public var handshakeTimeouts: UInt64 = 0
    /// Established connections closed for a record that did not decrypt or a fatal alert.
    public var recordErrors: UInt64 = 0

    public init() {}
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
    private let tlsFailures: [String: Counter] = Dictionary(uniqueKeysWithValues: [
        TLSConnectionFailure.Reason.notTLS, .handshakeFailed, .handshakeTruncated, .handshakeTimeout, .recordError,
    ].map { ($0.name, Counter()) })

    /// Counts one connection closed by its TLS layer.
    package func countTLSFailure(_ reason: TLSConnectionFailure.Reason) {
        tlsFailures[reason.name]?.add(1)
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
            tls: tlsSnapshot(),
            webSocket: webSocket.snapshot())
    }

    private func tlsSnapshot() -> TLSStatistics {
        func failures(_ reason: TLSConnectionFailure.Reason) -> UInt64 { tlsFailures[reason.name]?.load() ?? 0 }
        var figures = TLSStatistics()
        figures.handshakes = tlsHandshakes.load()
        figures.notTLS = failures(.notTLS)
        figures.handshakeFailures = failures(.handshakeFailed)
        figures.handshakesTruncated = failures(.handshakeTruncated)
        figures.handshakeTimeouts = failures(.handshakeTimeout)
        figures.recordErrors = failures(.recordError)
        return figures
    }
}
