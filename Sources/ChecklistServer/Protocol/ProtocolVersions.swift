/// The protocol versions this server speaks.
enum ProtocolVersions {
    static let supported: ClosedRange<UInt64> = 1...1

    /// The highest version both sides speak, or nil.
    static func negotiate(clientMin: UInt64, clientMax: UInt64) -> UInt64? {
        guard clientMin <= clientMax else { return nil }
        let high = min(clientMax, supported.upperBound)
        let low = max(clientMin, supported.lowerBound)
        return low <= high ? high : nil
    }

    static var description: String { "\(supported.lowerBound)...\(supported.upperBound)" }
}
