import ChecklistModel

/// SUBSCRIBE (0x30): asks for CHANGE pushes for some lists, or for every
/// list of the namespace, optionally from the revision the client has.
public struct Subscribe: WireMessage {
    public static let messageType = MessageType.subscribe
    static let hasRevision: UInt8 = 1 << 0

    /// One list, and the revision the client has of it (for catch-up).
    public struct Entry: Hashable, Sendable {
        public var list: ListID
        public var revision: Revision?
        public init(list: ListID, revision: Revision? = nil) {
            self.list = list
            self.revision = revision
        }
    }

    /// `scope` 1: every list of the namespace, including lists created
    /// later; `scope` 0: only the lists in `entries`.
    public var allLists: Bool
    public var entries: [Entry]

    public init(allLists: Bool = false, entries: [Entry]) {
        self.allLists = allLists
        self.entries = entries
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> Subscribe {
        let scope = try r.readU8("scope")
        guard scope <= 1 else { throw .badField("scope", "scope must be 0 or 1, got \(scope)") }
        // Every entry takes at least 2 bytes (list and presence).
        let count = try r.readCount("count", max: r.remaining / 2)
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let list = ListID(try r.readVarint("list"))
            let presence = try r.readPresence(known: hasRevision)
            entries.append(Entry(list: list, revision: presence & hasRevision != 0 ? try r.readVarint("revision") : nil))
        }
        return Subscribe(allLists: scope == 1, entries: entries)
    }

    public func encode(into w: inout WireWriter) {
        w.writeU8(allLists ? 1 : 0)
        w.writeVarint(entries.count)
        for entry in entries {
            w.writeVarint(entry.list.rawValue)
            w.writeU8(entry.revision != nil ? Self.hasRevision : 0)
            if let revision = entry.revision { w.writeVarint(revision) }
        }
    }
}
