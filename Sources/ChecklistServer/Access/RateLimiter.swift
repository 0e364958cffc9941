import ChecklistModel
import ChecklistThreads
import Synchronization

/// Requests per second per namespace (`checklistd --rate-limit`,
/// `--rate-burst`; Protocol/SPEC.md section 4.1): one token bucket per
/// namespace, shared by all its connections on every loop.
///
/// Locking rule: `buckets` is read and changed only under its lock, held
/// for one refill-and-take (no I/O, no allocation but a namespace's first
/// bucket).
public final class RateLimiter: Sendable {
    /// The rate and the bucket's size.
    public struct Settings: Sendable, Hashable {
        /// Requests a second, refilled continuously.
        public var requestsPerSecond: Double
        /// Requests a full bucket holds (a burst after a quiet time).
        public var burst: Double
        public init(requestsPerSecond: Double, burst: Double? = nil) {
            self.requestsPerSecond = requestsPerSecond
            self.burst = max(1, burst ?? requestsPerSecond)
        }
    }

    private struct Bucket {
        var tokens: Double
        var refilledAt: UInt64
    }

    private struct Buckets {
        var byNamespace: [Namespace: Bucket] = [:]
        /// When there are this many, full ones are dropped (a full bucket
        /// is the same as none), so quiet namespaces cost no memory.
        var pruneAt = RateLimiter.minimumPruneAt
    }

    static let minimumPruneAt = 1024

    public let settings: Settings
    private let buckets = Mutex(Buckets())

    public init(_ settings: Settings) {
        self.settings = settings
    }

    /// Buckets held now (tests).
    var bucketCount: Int { buckets.withLock { $0.byNamespace.count } }

    /// Takes one request of `namespace` at `now` (monotonic nanoseconds):
    /// nil when taken, else the milliseconds until one would be (at least 1).
    func take(_ namespace: Namespace, now: UInt64 = monotonicNanoseconds()) -> UInt64? {
        let rate = settings.requestsPerSecond, burst = settings.burst
        return buckets.withLock { buckets -> UInt64? in
            if buckets.byNamespace.count >= buckets.pruneAt {
                buckets.byNamespace = buckets.byNamespace.filter { _, bucket in
                    bucket.tokens + Double(now &- bucket.refilledAt) / 1e9 * rate < burst
                }
                buckets.pruneAt = max(Self.minimumPruneAt, 2 * buckets.byNamespace.count)
            }
            var bucket = buckets.byNamespace[namespace] ?? Bucket(tokens: burst, refilledAt: now)
            let elapsed = Double(now &- bucket.refilledAt) / 1e9
            bucket.tokens = min(burst, bucket.tokens + max(0, elapsed) * rate)
            bucket.refilledAt = max(now, bucket.refilledAt)
            defer { buckets.byNamespace[namespace] = bucket }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            return max(1, UInt64(((1 - bucket.tokens) / rate * 1000).rounded(.up)))
        }
    }
}
