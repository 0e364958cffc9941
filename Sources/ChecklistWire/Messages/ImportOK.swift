import ChecklistModel

/// IMPORT_OK (0xC1): the answer to every IMPORT request: what the server
/// has decoded so far and, for END, what it applied.
public struct ImportOK: WireMessage {
    public static let messageType = MessageType.importOK

    public enum Status: UInt8, Hashable, Sendable {
        /// The answer to BEGIN.
        case started = 0
        /// The answer to DATA: the chunk was decoded and staged.
        case received = 1
        /// The answer to END: every list was applied.
        case applied = 2
        /// The answer to CANCEL: nothing was applied.
        case cancelled = 3
    }

    /// A list whose id in the snapshot was not free: the id it has now.
    public struct Renamed: Hashable, Sendable {
        public var from: ListID
        public var to: ListID
        public init(from: ListID, to: ListID) {
            self.from = from
            self.to = to
        }
    }

    public var status: Status
    /// The last DATA sequence received (0 before any).
    public var sequence: UInt64
    /// Uncompressed snapshot bytes decoded so far.
    public var rawBytes: UInt64
    /// Lists decoded so far (APPLIED: lists applied).
    public var lists: UInt64
    /// Items decoded so far (APPLIED: items applied).
    public var items: UInt64
    /// APPLIED in mode REPLACE: lists deleted; otherwise 0.
    public var deleted: UInt64
    /// APPLIED: every list that got another id than its snapshot id.
    public var renamed: [Renamed]

    public init(status: Status, sequence: UInt64, rawBytes: UInt64, lists: UInt64, items: UInt64,
                deleted: UInt64 = 0, renamed: [Renamed] = []) {
        self.status = status
        self.sequence = sequence
        self.rawBytes = rawBytes
        self.lists = lists
        self.items = items
        self.deleted = deleted
        self.renamed = renamed
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> ImportOK {
        let raw = try r.readU8("status")
        guard let status = Status(rawValue: raw) else { throw .badField("status", "unknown import status \(raw)") }
        let sequence = try r.readVarint("sequence")
        let rawBytes = try r.readVarint("rawBytes")
        let lists = try r.readVarint("lists")
        let items = try r.readVarint("items")
        let deleted = try r.readVarint("deleted")
        // Every pair takes at least 2 bytes.
        let count = try r.readCount("count", max: r.remaining / 2)
        var renamed: [Renamed] = []
        renamed.reserveCapacity(count)
        for _ in 0..<count {
            renamed.append(Renamed(from: ListID(try r.readVarint("from")), to: ListID(try r.readVarint("to"))))
        }
        return ImportOK(status: status, sequence: sequence, rawBytes: rawBytes, lists: lists, items: items,
                        deleted: deleted, renamed: renamed)
    }

    /// The most renamed pairs (at most 20 bytes each) an answer in a frame
    /// of at most `maxFrameBytes` holds, 64 bytes being kept for the other fields.
    public static func maxRenamedPairs(maxFrameBytes: UInt32) -> Int {
        (Int(maxFrameBytes) - 64) / 20
    }

    public func encode(into w: inout WireWriter) {
        w.writeU8(status.rawValue)
        w.writeVarint(sequence)
        w.writeVarint(rawBytes)
        w.writeVarint(lists)
        w.writeVarint(items)
        w.writeVarint(deleted)
        w.writeVarint(renamed.count)
        for pair in renamed {
            w.writeVarint(pair.from.rawValue)
            w.writeVarint(pair.to.rawValue)
        }
    }
}
