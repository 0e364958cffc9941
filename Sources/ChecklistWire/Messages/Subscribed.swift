import ChecklistModel

/// SUBSCRIBED (0xB0): the answer to SUBSCRIBE, one entry per list it covers.
/// The catch-up CHANGE pushes of the `live` entries follow it at once.
public struct Subscribed: WireMessage {
    public static let messageType = MessageType.subscribed

    /// What the subscription of one list started with.
    public enum Status: UInt8, Hashable, Sendable {
        /// Subscribed; the changes after the client's revision up to
        /// `revision` follow as CHANGE pushes (none without a revision).
        case live = 0
        /// Subscribed, but the changes after the client's revision are no
        /// longer retained (or the client is ahead of the server): read the
        /// list again. No catch-up follows.
        case resync = 1
        /// Subscribed, but the catch-up is too large to push: fetch it with
        /// CHANGES_SINCE. No catch-up follows.
        case fetch = 2
        /// No such list: not subscribed.
        case notFound = 3
    }

    public struct Entry: Hashable, Sendable {
        public var list: ListID
        /// The list's revision when the subscription started: live pushes
        /// for it carry higher revisions.
        public var revision: Revision
        public var status: Status
        public init(list: ListID, revision: Revision, status: Status) {
            self.list = list
            self.revision = revision
            self.status = status
        }
    }

    public var entries: [Entry]

    public init(entries: [Entry]) {
        self.entries = entries
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> Subscribed {
        // Every entry takes at least 3 bytes.
        let count = try r.readCount("count", max: r.remaining / 3)
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let list = ListID(try r.readVarint("list"))
            let revision = try r.readVarint("revision")
            let raw = try r.readU8("status")
            guard let status = Status(rawValue: raw) else { throw .badField("status", "unknown subscription status \(raw)") }
            entries.append(Entry(list: list, revision: revision, status: status))
        }
        return Subscribed(entries: entries)
    }

    public func encode(into w: inout WireWriter) {
        w.writeVarint(entries.count)
        for entry in entries {
            w.writeVarint(entry.list.rawValue)
            w.writeVarint(entry.revision)
            w.writeU8(entry.status.rawValue)
        }
    }
}
