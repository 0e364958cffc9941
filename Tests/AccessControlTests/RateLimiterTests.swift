@testable import ChecklistServer
import ChecklistModel
import Testing

/// The token bucket of `--rate-limit`, on a clock the test moves.
@Suite struct RateLimiterTests {
    let alice = Namespace("alice"), bob = Namespace("bob")
    static let second: UInt64 = 1_000_000_000

    @Test func aBurstThenTheRateWithTheWaitNamed() {
        let limiter = RateLimiter(RateLimiter.Settings(requestsPerSecond: 10, burst: 3))
        let start: UInt64 = 5 * Self.second
        for _ in 0..<3 { #expect(limiter.take(alice, now: start) == nil) }
        #expect(limiter.take(alice, now: start) == 100)
        // A refusal takes nothing: half the wait later, half the wait is left.
        #expect(limiter.take(alice, now: start + Self.second / 20) == 50)
        #expect(limiter.take(alice, now: start + Self.second / 10) == nil)
        #expect(limiter.take(alice, now: start + Self.second / 10) == 100)
        // Quiet for long: the bucket is full again, no more.
        for _ in 0..<3 { #expect(limiter.take(alice, now: start + 60 * Self.second) == nil) }
        #expect(limiter.take(alice, now: start + 60 * Self.second) != nil)
    }

    @Test func namespacesHaveTheirOwnBuckets() {
        let limiter = RateLimiter(RateLimiter.Settings(requestsPerSecond: 1))
        #expect(limiter.take(alice, now: Self.second) == nil)
        #expect(limiter.take(alice, now: Self.second) == 1000)
        #expect(limiter.take(bob, now: Self.second) == nil)
    }

    @Test func theBurstDefaultsToOneSecondsRequests() {
        #expect(RateLimiter.Settings(requestsPerSecond: 50).burst == 50)
        #expect(RateLimiter.Settings(requestsPerSecond: 0.5).burst == 1)
    }

    /// Quiet namespaces' buckets are dropped once there are many: memory
    /// follows the namespaces active within a burst's refill, not all ever seen.
    @Test func fullBucketsAreDropped() {
        let limiter = RateLimiter(RateLimiter.Settings(requestsPerSecond: 10))
        for i in 0..<RateLimiter.minimumPruneAt { _ = limiter.take(Namespace("n\(i)"), now: Self.second) }
        #expect(limiter.bucketCount == RateLimiter.minimumPruneAt)
        // Ten seconds later every bucket is full again: the next take prunes them all.
        #expect(limiter.take(alice, now: 11 * Self.second) == nil)
        #expect(limiter.bucketCount == 1)
    }
}
