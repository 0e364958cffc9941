import ChecklistLatency
import ChecklistModel
import ChecklistWire
import Synchronization

/// One event loop's request counters: requests and ERROR answers by message
/// type, ERROR answers by code, latencies, and the connection events the
/// protocol handlers see. Each loop records into its own shard (so the lock
/// is never contended by another loop); `ServerMetrics` merges the shards
/// for STATS and /metrics.
final class RequestMetrics: Sendable {
    struct Figures {
        /// Indexed by the request frame's type byte.
        var requests = [UInt64](repeating: 0, count: 256)
        var requestErrors = [UInt64](repeating: 0, count: 256)
        /// ERROR frames sent, by code (connection-level ones included).
        var errorsByCode: [UInt16: UInt64] = [:]
        var latency = LatencyHistogram(precisionBits: 5)
        var idleClosed: UInt64 = 0
        var inFlightPauses: UInt64 = 0
        /// Connections on a plaintext port whose first byte began a TLS handshake.
        var tlsOnPlainPort: UInt64 = 0

        mutating func merge(_ other: Figures) {
            for i in 0..<256 {
                requests[i] &+= other.requests[i]
                requestErrors[i] &+= other.requestErrors[i]
            }
            errorsByCode.merge(other.errorsByCode, uniquingKeysWith: &+)
            latency.merge(other.latency)
            idleClosed &+= other.idleClosed
            inFlightPauses &+= other.inFlightPauses
            tlsOnPlainPort &+= other.tlsOnPlainPort
        }
    }

    /// Locking rule: only this shard's loop writes (one uncontended lock per
    /// request); readers copy the figures out under the lock.
    private let figures = Mutex(Figures())

    /// One request handled: its type, the ERROR code it was answered with
    /// (nil for a successful answer) and the time it took.
    func recordRequest(type: MessageType, errorCode: ChecklistError.Code?, nanos: UInt64) {
        figures.withLock {
            $0.requests[Int(type.rawValue)] &+= 1
            $0.latency.record(nanos: nanos)
            if let errorCode {
                $0.requestErrors[Int(type.rawValue)] &+= 1
                $0.errorsByCode[errorCode.rawValue, default: 0] &+= 1
            }
        }
    }

    /// `count` requests of one `type` answered together, in `nanos` each,
    /// `errors` the codes of those answered with an ERROR: what `count`
    /// calls of `recordRequest` record, under one hold of the lock.
    func recordRequests(type: MessageType, count: Int, errors: [ChecklistError.Code], nanos: UInt64) {
        guard count > 0 else { return }
        figures.withLock {
            $0.requests[Int(type.rawValue)] &+= UInt64(count)
            $0.latency.record(nanos: nanos, count: UInt64(count))
            for code in errors {
                $0.requestErrors[Int(type.rawValue)] &+= 1
                $0.errorsByCode[code.rawValue, default: 0] &+= 1
            }
        }
    }

    /// A request counted as answered (`recordRequest`) whose answer was
    /// then replaced by an ERROR with `code` before it was sent (its commit
    /// failed; a read whose changes in flight were rewritten).
    func recordReplacedAnswer(of type: MessageType, with code: ChecklistError.Code) {
        figures.withLock {
            $0.requestErrors[Int(type.rawValue)] &+= 1
            $0.errorsByCode[code.rawValue, default: 0] &+= 1
        }
    }

    /// An ERROR frame that answers no request (request id 0: framing lost,
    /// connection limit, idle timeout, shutting down).
    func recordConnectionError(_ code: ChecklistError.Code) {
        figures.withLock { $0.errorsByCode[code.rawValue, default: 0] &+= 1 }
    }

    func recordIdleClose() { figures.withLock { $0.idleClosed &+= 1 } }

    func recordTLSOnPlainPort() { figures.withLock { $0.tlsOnPlainPort &+= 1 } }

    func recordInFlightPause() { figures.withLock { $0.inFlightPauses &+= 1 } }

    var snapshot: Figures { figures.withLock { $0 } }
}
