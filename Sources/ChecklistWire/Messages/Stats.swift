import ChecklistModel

/// STATS (0x50): asks for the server's operational figures, and with option
/// `usage` for the connection's namespace usage (Protocol/SPEC.md section
/// 6.10). The body is empty, or one `options` byte.
public struct Stats: WireMessage {
    public static let messageType = MessageType.stats

    /// What the report is to carry besides the server-wide figures.
    public struct Options: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The usage and quotas of the connection's namespace (`StatsReport.usage`).
        public static let usage = Options(rawValue: 1 << 0)
    }

    /// Bits this version does not know are kept as they came (and ignored).
    public var options: Options

    public init(options: Options = []) {
        self.options = options
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> Stats {
        // The byte is optional: every STATS written before options existed is empty.
        guard r.remaining > 0 else { return Stats() }
        return Stats(options: Options(rawValue: try r.readU8("options")))
    }

    /// Without options the body is empty, byte for byte the STATS of before.
    public func encode(into w: inout WireWriter) {
        if !options.isEmpty { w.writeU8(options.rawValue) }
    }
}
