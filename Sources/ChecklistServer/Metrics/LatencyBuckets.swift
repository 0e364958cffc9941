/// Server-side request latencies in log-linear buckets: exact below 32 ns,
/// then 16 buckets per power of two (each at most 1/16 = 6.25% wide). Every
/// sample is counted; memory is fixed (~8 KB) whatever the count, so one per
/// event loop costs nothing to keep for the server's whole life.
struct LatencyBuckets {
    private static let subBucketBits = 5
    private static let subBuckets = 1 << subBucketBits
    private static let bucketCount = subBuckets + (64 - subBucketBits) * (subBuckets / 2)

    private(set) var counts = [UInt64](repeating: 0, count: LatencyBuckets.bucketCount)
    private(set) var count: UInt64 = 0
    private(set) var maxNanos: UInt64 = 0

    mutating func record(nanos: UInt64) {
        counts[Self.index(of: nanos)] &+= 1
        count &+= 1
        if nanos > maxNanos { maxNanos = nanos }
    }

    mutating func merge(_ other: LatencyBuckets) {
        for i in counts.indices where other.counts[i] != 0 { counts[i] &+= other.counts[i] }
        count &+= other.count
        maxNanos = max(maxNanos, other.maxNanos)
    }

    /// The value at quantile `q` (0...1) in nanoseconds: the upper edge of
    /// the bucket holding that sample, capped at the largest sample; 0 when empty.
    func quantile(_ q: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let rank = max(1, UInt64((q * Double(count)).rounded(.up)))
        var seen: UInt64 = 0
        for (i, c) in counts.enumerated() where c > 0 {
            seen += c
            if seen >= rank { return min(Self.upperEdge(of: i), maxNanos) }
        }
        return maxNanos
    }

    static func index(of v: UInt64) -> Int {
        if v < UInt64(subBuckets) { return Int(v) }
        let magnitude = 63 - v.leadingZeroBitCount           // >= subBucketBits
        let shift = magnitude - subBucketBits + 1
        let sub = Int(v >> UInt64(shift)) - subBuckets / 2   // 16..<32 -> 0..<16
        return subBuckets + (shift - 1) * (subBuckets / 2) + sub
    }

    static func upperEdge(of index: Int) -> UInt64 {
        if index < subBuckets { return UInt64(index) }
        let shift = (index - subBuckets) / (subBuckets / 2) + 1
        let sub = (index - subBuckets) % (subBuckets / 2) + subBuckets / 2
        // For the top bucket the shift drops the high bit: 0 &- 1 is UInt64.max.
        return (UInt64(sub + 1) << UInt64(shift)) &- 1
    }
}
