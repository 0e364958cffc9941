import ChecklistModel

extension StatsReport {
    /// The asking connection's namespace: what it holds and the quotas that
    /// bound it (presence bit 5, Protocol/SPEC.md section 6.10), sent only
    /// in answer to `Stats.Options.usage`.
    public struct UsageStatus: Hashable, Sendable {
        static let hasQuotaLists: UInt8 = 1 << 0
        static let hasQuotaItems: UInt8 = 1 << 1
        static let hasQuotaBytes: UInt8 = 1 << 2

        /// Lists of the namespace.
        public var lists: UInt64
        /// Items of all its lists together.
        public var items: UInt64
        /// UTF-8 bytes of its list names, icons, item texts and client keys.
        public var bytes: UInt64
        /// `--quota-lists`; nil when not set.
        public var quotaLists: UInt64?
        /// `--quota-items`; nil when not set.
        public var quotaItems: UInt64?
        /// `--quota-bytes`; nil when not set.
        public var quotaBytes: UInt64?

        public init(lists: UInt64, items: UInt64, bytes: UInt64, quotaLists: UInt64? = nil, quotaItems: UInt64? = nil,
                    quotaBytes: UInt64? = nil) {
            self.lists = lists
            self.items = items
            self.bytes = bytes
            self.quotaLists = quotaLists
            self.quotaItems = quotaItems
            self.quotaBytes = quotaBytes
        }

        static func decode(from r: inout WireReader) throws(ChecklistError) -> UsageStatus {
            var s = UsageStatus(lists: try r.readVarint("usageLists"), items: try r.readVarint("usageItems"),
                                bytes: try r.readVarint("usageBytes"))
            let quotas = try r.readPresence("quotaPresence", known: hasQuotaLists | hasQuotaItems | hasQuotaBytes)
            if quotas & hasQuotaLists != 0 { s.quotaLists = try r.readVarint("quotaLists") }
            if quotas & hasQuotaItems != 0 { s.quotaItems = try r.readVarint("quotaItems") }
            if quotas & hasQuotaBytes != 0 { s.quotaBytes = try r.readVarint("quotaBytes") }
            return s
        }

        func encode(into w: inout WireWriter) {
            w.writeVarint(lists)
            w.writeVarint(items)
            w.writeVarint(bytes)
            w.writeU8((quotaLists != nil ? Self.hasQuotaLists : 0) | (quotaItems != nil ? Self.hasQuotaItems : 0)
                      | (quotaBytes != nil ? Self.hasQuotaBytes : 0))
            for quota in [quotaLists, quotaItems, quotaBytes] {
                if let quota { w.writeVarint(quota) }
            }
        }
    }
}
