import ChecklistModel
import ChecklistWire

/// A log sequence number: the position of a record in the write-ahead log.
/// The first record ever appended is 1; every record takes the next number.
/// 0 means "no record". A snapshot names the log positions it covers.
public typealias LSN = UInt64

/// The record types of a snapshot (Protocol/SNAPSHOT.md section 3).
/// Types 0x40-0x7F are optional extensions that readers skip when they do
/// not know them; any other unknown type is an error.
public enum SnapshotRecordType: UInt8, Sendable {
    case header = 0x01
    case list = 0x02
    case item = 0x03
    case trailer = 0x04
    /// An extension record (section 3.8): one client's remembered
    /// idempotency keys. Only a server's own snapshots carry it.
    case idempotency = 0x40

    /// Types a reader may skip without understanding them.
    public static let skippable: ClosedRange<UInt8> = 0x40...0x7F
}

/// The first bytes of every snapshot's uncompressed content: `CKSS\r\n\x1a\n`
/// (the line-end and EOF bytes catch text-mode mangling), then the u16
/// big-endian format version.
public enum SnapshotFormat {
    public static let magic: [UInt8] = [0x43, 0x4B, 0x53, 0x53, 0x0D, 0x0A, 0x1A, 0x0A]
    public static let version: UInt16 = 1
    /// Magic plus version.
    public static let preambleBytes = 10
}

/// The HEADER record: what the snapshot is and where it continues the log.
public struct SnapshotHeader: Hashable, Sendable {
    /// Seconds since 1970-01-01T00:00:00Z when the snapshot was started.
    public var createdAt: Int64
    /// Free text naming the writer, e.g. `checklistd/1.0 compaction`.
    public var source: String
    /// Lists the writer expects to write (exact for an offline export; for a
    /// snapshot of a running server an estimate). The trailer has the truth.
    public var listCount: UInt64
    /// Items the writer expects to write, like `listCount`.
    public var itemCount: UInt64
    /// Every change with an LSN up to this one is in the snapshot; replay
    /// starts after it. 0 for a snapshot not tied to a log (export).
    public var startLSN: LSN
    /// The store's next list id when the snapshot started.
    public var nextListID: ListID

    public init(createdAt: Int64, source: String, listCount: UInt64, itemCount: UInt64, startLSN: LSN, nextListID: ListID) {
        self.createdAt = createdAt
        self.source = source
        self.listCount = listCount
        self.itemCount = itemCount
        self.startLSN = startLSN
        self.nextListID = nextListID
    }

    func encode(into w: inout WireWriter) {
        w.writeZigZag(createdAt)
        w.writeString(source)
        w.writeVarint(listCount)
        w.writeVarint(itemCount)
        w.writeVarint(startLSN)
        w.writeVarint(nextListID.rawValue)
    }

    static func decode(from r: inout WireReader) throws(ChecklistError) -> SnapshotHeader {
        SnapshotHeader(createdAt: try r.readZigZag("createdAt"), source: try r.readString("source"),
                       listCount: try r.readVarint("listCount"), itemCount: try r.readVarint("itemCount"),
                       startLSN: try r.readVarint("startLSN"), nextListID: ListID(try r.readVarint("nextListID")))
    }
}

/// A LIST record: one checklist without its items. Exactly `itemCount` ITEM
/// records follow it, in the list's order.
public struct SnapshotList: Hashable, Sendable {
    public var namespace: Namespace
    public var id: ListID
    public var name: String
    public var icon: String
    /// The list's revision; items that follow are its state at this revision.
    public var revision: Revision
    /// The id the list gives its next new item.
    public var nextItemID: ItemID
    public var itemCount: UInt64

    public init(namespace: Namespace, id: ListID, name: String, icon: String, revision: Revision, nextItemID: ItemID, itemCount: UInt64) {
        self.namespace = namespace
        self.id = id
        self.name = name
        self.icon = icon
        self.revision = revision
        self.nextItemID = nextItemID
        self.itemCount = itemCount
    }

    func encode(into w: inout WireWriter) {
        w.writeString(namespace.rawValue)
        w.writeVarint(id.rawValue)
        w.writeString(name)
        w.writeString(icon)
        w.writeVarint(revision)
        w.writeVarint(nextItemID.rawValue)
        w.writeVarint(itemCount)
    }

    static func decode(from r: inout WireReader) throws(ChecklistError) -> SnapshotList {
        SnapshotList(namespace: Namespace(try r.readString("namespace")), id: ListID(try r.readVarint("id")),
                     name: try r.readString("name"), icon: try r.readString("icon"),
                     revision: try r.readVarint("revision"), nextItemID: ItemID(try r.readVarint("nextItemID")),
                     itemCount: try r.readVarint("itemCount"))
    }
}

/// The TRAILER record: what was actually written, and a checksum of it.
public struct SnapshotTrailer: Hashable, Sendable {
    public var listCount: UInt64
    public var itemCount: UInt64
    /// The log's last LSN when the snapshot was finished. Changes in
    /// `(startLSN, endLSN]` may or may not be in the snapshot (see
    /// `ReplayRule`). 0 when not tied to a log.
    public var endLSN: LSN
    /// Uncompressed bytes before the trailer record.
    public var contentBytes: UInt64
    /// CRC-32 of those bytes.
    public var crc32: UInt32

    public init(listCount: UInt64, itemCount: UInt64, endLSN: LSN, contentBytes: UInt64, crc32: UInt32) {
        self.listCount = listCount
        self.itemCount = itemCount
        self.endLSN = endLSN
        self.contentBytes = contentBytes
        self.crc32 = crc32
    }

    func encode(into w: inout WireWriter) {
        w.writeVarint(listCount)
        w.writeVarint(itemCount)
        w.writeVarint(endLSN)
        w.writeVarint(contentBytes)
        w.writeU32BE(crc32)
    }

    static func decode(from r: inout WireReader) throws(ChecklistError) -> SnapshotTrailer {
        let lists = try r.readVarint("listCount")
        let items = try r.readVarint("itemCount")
        let end = try r.readVarint("endLSN")
        let content = try r.readVarint("contentBytes")
        let crc = try r.readU32BE("crc32")
        return SnapshotTrailer(listCount: lists, itemCount: items, endLSN: end, contentBytes: content, crc32: crc)
    }
}

/// An ITEM record's body: the item id, then **ItemFields** as in
/// Protocol/SPEC.md section 6.
extension Item {
    func encodeSnapshotRecord(into w: inout WireWriter) {
        w.writeVarint(id.rawValue)
        fields.encode(into: &w)
    }

    static func decodeSnapshotRecord(from r: inout WireReader) throws(ChecklistError) -> Item {
        Item(id: ItemID(try r.readVarint("id")), fields: try ItemFields.decode(from: &r))
    }
}

extension ImportedItems.View {
    /// An ITEM record's body (section 3.5) as a view of its bytes, without
    /// making a `String`; nil when the body does not decode (the caller
    /// then runs `Item.decodeSnapshotRecord`, which says why).
    static func snapshotRecord(_ body: UnsafeRawBufferPointer) -> ImportedItems.View? {
        // The flag bits of ItemFields as literals: `ItemFlags`' statics are
        // lazily made globals, each use a call on this per-row path.
        let checked: UInt8 = 1 << 0, remind: UInt8 = 1 << 1, hasDue: UInt8 = 1 << 2, hasPrice: UInt8 = 1 << 3
        // A row with a client key (`hasKey`) takes the general decoder.
        assert(ItemFlags.known.rawValue & ~ItemFlags.hasKey.rawValue == checked | remind | hasDue | hasPrice)
        var r = WireReader(body)
        guard let id = try? r.readVarint("id"), let raw = try? r.readU8("flags"),
              raw & ~(checked | remind | hasDue | hasPrice) == 0,
              let text = try? r.readByteSlice("text") else { return nil }
        var due: Int64?
        var price: Int64?
        if raw & hasDue != 0 {
            guard let value = try? r.readZigZag("due") else { return nil }
            due = value
        }
        if raw & hasPrice != 0 {
            guard let value = try? r.readZigZag("price") else { return nil }
            price = value
        }
        guard Self.isValidUTF8(text) else { return nil }
        return ImportedItems.View(id: ItemID(id), checked: raw & checked != 0, remind: raw & remind != 0,
                                  due: due, price: price, text: text)
    }

    /// ASCII a word at a time; anything else by the standard library.
    private static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        var high: UInt64 = 0
        while i + 8 <= bytes.count {
            high |= bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < bytes.count {
            high |= UInt64(bytes[i])
            i += 1
        }
        if high & 0x8080_8080_8080_8080 == 0 { return true }
        let span = bytes.bindMemory(to: UInt8.self).span
        return (try? UTF8Span(validating: span)) != nil
    }
}

/// What a snapshot reader hands out after the header, in file order.
public enum SnapshotRecord: Hashable, Sendable {
    /// A list; its `itemCount` items follow.
    case list(SnapshotList)
    /// The next item of the last list.
    case item(Item)
    /// One client's remembered idempotency keys (an extension record:
    /// readers that only want lists ignore it).
    case idempotency(SnapshotIdempotency)
}
