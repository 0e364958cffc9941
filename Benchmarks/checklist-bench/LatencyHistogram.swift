/// Records every latency sample into log-linear buckets (like HdrHistogram
/// with 64 sub-buckets per power of two): nothing is averaged away, the tail stays
/// exact to within 1/64 (1.6%), and memory is fixed whatever the sample count.
struct LatencyHistogram: Sendable {
    /// Values below 128 ns are exact; above, 64 linear buckets per power of two.
    private static let subBucketBits = 7
    private static let subBuckets = 1 << subBucketBits
    private var counts = [UInt64](repeating: 0, count: 64 * LatencyHistogram.subBuckets)
    private(set) var count: UInt64 = 0
    private(set) var maxNanos: UInt64 = 0
    private(set) var minNanos: UInt64 = .max

    init() {}

    mutating func record(nanos: UInt64) {
        counts[Self.index(of: nanos)] += 1
        count += 1
        maxNanos = max(maxNanos, nanos)
        minNanos = min(minNanos, nanos)
    }

    mutating func record(_ duration: Duration) {
        let c = duration.components
        record(nanos: UInt64(max(0, c.seconds)) * 1_000_000_000 + UInt64(max(0, c.attoseconds) / 1_000_000_000))
    }

    mutating func merge(_ other: LatencyHistogram) {
        for i in counts.indices { counts[i] += other.counts[i] }
        count += other.count
        maxNanos = max(maxNanos, other.maxNanos)
        minNanos = min(minNanos, other.minNanos)
    }

    /// The value at quantile `q` (0...1), in nanoseconds: the upper edge of
    /// the bucket holding that sample, capped at the largest sample.
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

    func quantileMs(_ q: Double) -> Double { Double(quantile(q)) / 1e6 }
    var maxMs: Double { Double(maxNanos) / 1e6 }

    private static func index(of v: UInt64) -> Int {
        if v < UInt64(subBuckets) { return Int(v) }
        let magnitude = 63 - v.leadingZeroBitCount          // >= subBucketBits
        let shift = magnitude - subBucketBits + 1
        let sub = Int(v >> UInt64(shift)) - subBuckets / 2  // 64..<128 -> 0..<64
        return subBuckets + (shift - 1) * (subBuckets / 2) + sub
    }

    private static func upperEdge(of index: Int) -> UInt64 {
        if index < subBuckets { return UInt64(index) }
        let shift = (index - subBuckets) / (subBuckets / 2) + 1
        let sub = (index - subBuckets) % (subBuckets / 2) + subBuckets / 2
        return (UInt64(sub + 1) << UInt64(shift)) - 1
    }
}
