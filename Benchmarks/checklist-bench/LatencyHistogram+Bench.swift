import ChecklistLatency

extension LatencyHistogram {
    /// The bench's precision: 64 buckets per power of two, so a reported
    /// quantile is at most 1/64 (1.6%) above the true value.
    init() { self.init(precisionBits: 7) }
}
