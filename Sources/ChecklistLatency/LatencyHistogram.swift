/// Latency samples in log-linear buckets (like HdrHistogram): values below
/// `2^precisionBits` nanoseconds are exact; above, each power of two is cut
/// into `2^(precisionBits - 1)` equal buckets. Every sample is counted, none
/// is averaged away, and memory is fixed whatever the sample count. Used by
/// the server's request metrics and by checklist-bench.
public struct LatencyHistogram: Sendable {
    /// How many bits of a value the buckets keep: 5 gives 16 buckets per power
    /// of two (each at most 1/16 = 6.25% wide, ~8 KB); 7 gives 64 (1.6%, ~30 KB).
    public let precisionBits: Int
    private var counts: [UInt64]
    /// Samples recorded.
    public private(set) var count: UInt64 = 0
    /// The largest sample, in nanoseconds (0 when empty).
    public private(set) var maxNanos: UInt64 = 0
    /// The smallest sample, in nanoseconds (`UInt64.max` when empty).
    public private(set) var minNanos: UInt64 = .max

    /// An empty histogram keeping `precisionBits` bits (2...16) of every value.
    public init(precisionBits: Int) {
        precondition((2...16).contains(precisionBits), "precisionBits is 2...16")
        self.precisionBits = precisionBits
        let subBuckets = 1 << precisionBits
        counts = [UInt64](repeating: 0, count: subBuckets + (64 - precisionBits) * (subBuckets / 2))
    }

    /// Counts one sample of `nanos` nanoseconds.
    public mutating func record(nanos: UInt64) {
        counts[index(of: nanos)] &+= 1
        count &+= 1
        maxNanos = max(maxNanos, nanos)
        minNanos = min(minNanos, nanos)
    }

    /// Counts `count` samples of `nanos` nanoseconds each (requests
    /// answered together, which took the same time).
    public mutating func record(nanos: UInt64, count samples: UInt64) {
        guard samples > 0 else { return }
        counts[index(of: nanos)] &+= samples
        count &+= samples
        maxNanos = max(maxNanos, nanos)
        minNanos = min(minNanos, nanos)
    }

    /// Counts one sample; a negative duration counts as 0.
    public mutating func record(_ duration: Duration) {
        let c = duration.components
        record(nanos: UInt64(max(0, c.seconds)) * 1_000_000_000 + UInt64(max(0, c.attoseconds) / 1_000_000_000))
    }

    /// Adds every sample of `other`, which must have the same precision.
    public mutating func merge(_ other: LatencyHistogram) {
        precondition(other.precisionBits == precisionBits, "merging histograms of different precision")
        for i in counts.indices where other.counts[i] != 0 { counts[i] &+= other.counts[i] }
        count &+= other.count
        maxNanos = max(maxNanos, other.maxNanos)
        minNanos = min(minNanos, other.minNanos)
    }

    /// The value at quantile `q` (0...1), in nanoseconds: the upper edge of
    /// the bucket holding that sample, capped at the largest sample; 0 when empty.
    public func quantile(_ q: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let rank = max(1, UInt64((q * Double(count)).rounded(.up)))
        var seen: UInt64 = 0
        for (i, c) in counts.enumerated() where c > 0 {
            seen += c
            if seen >= rank { return min(upperEdge(of: i), maxNanos) }
        }
        return maxNanos
    }

    /// `quantile(q)` in milliseconds.
    public func quantileMs(_ q: Double) -> Double { Double(quantile(q)) / 1e6 }
    /// The largest sample in milliseconds.
    public var maxMs: Double { Double(maxNanos) / 1e6 }

    /// The bucket that counts `v`.
    public func index(of v: UInt64) -> Int {
        let subBuckets = 1 << precisionBits
        if v < UInt64(subBuckets) { return Int(v) }
        let magnitude = 63 - v.leadingZeroBitCount            // >= precisionBits
        let shift = magnitude - precisionBits + 1
        let sub = Int(v >> UInt64(shift)) - subBuckets / 2    // upper half of the sub-buckets -> 0..<subBuckets/2
        return subBuckets + (shift - 1) * (subBuckets / 2) + sub
    }

    /// The largest value bucket `index` counts.
    public func upperEdge(of index: Int) -> UInt64 {
        let subBuckets = 1 << precisionBits
        if index < subBuckets { return UInt64(index) }
        let shift = (index - subBuckets) / (subBuckets / 2) + 1
        let sub = (index - subBuckets) % (subBuckets / 2) + subBuckets / 2
        // For the top bucket the shift drops the high bit: 0 &- 1 is UInt64.max.
        return (UInt64(sub + 1) << UInt64(shift)) &- 1
    }
}
