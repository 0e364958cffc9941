import ChecklistModel
import ChecklistSnapshot
import ChecklistWire

/// Builds snapshot files byte by byte from Protocol/SNAPSHOT.md (preamble,
/// records, trailer with its CRC-32, gzip container), so that the IMPORT
/// cases can send good snapshots, and bad ones made to order, to any server.
public struct SnapshotBytes: Sendable {
    public struct List: Sendable {
        public var id: UInt64
        public var name: String
        public var icon = "No Icon"
        public var revision: UInt64 = 1
        public var items: [(id: UInt64, text: String, checked: Bool)] = []

        public init(id: UInt64, name: String, items: [(id: UInt64, text: String, checked: Bool)] = []) {
            self.id = id
            self.name = name
            self.items = items
        }
    }

    /// The uncompressed content.
    public private(set) var content: [UInt8] = [0x43, 0x4B, 0x53, 0x53, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x01]
    private var lists: UInt64 = 0
    private var items: UInt64 = 0

    /// A snapshot holding `lists`, with a correct trailer.
    public init(_ lists: [List], namespace: String = "default") {
        record(0x01, Body().varint(0).string("checklist-conformance").varint(UInt64(lists.count))
            .varint(UInt64(lists.reduce(0) { $0 + $1.items.count })).varint(0).varint((lists.map(\.id).max() ?? 0) + 1))
        for list in lists {
            record(0x02, Body().string(namespace).varint(list.id).string(list.name).string(list.icon).varint(list.revision)
                .varint((list.items.map(\.id).max() ?? 0) + 1).varint(UInt64(list.items.count)))
            self.lists += 1
            for item in list.items {
                record(0x03, Body().varint(item.id).u8(item.checked ? 1 : 0).string(item.text))
                items += 1
            }
        }
    }

    /// Only the preamble and a HEADER, for content made to order.
    public static func headerOnly() -> SnapshotBytes { SnapshotBytes([]) }

    /// Appends a record of `type` with `body`.
    public mutating func record(_ type: UInt8, _ body: Body) {
        content += Body().u8(type).varint(UInt64(body.bytes.count)).bytes + body.bytes
    }

    /// Appends raw bytes to the content.
    public mutating func append(_ bytes: [UInt8]) { content += bytes }

    /// The TRAILER for the content so far; `crcDelta` spoils its CRC-32.
    public func trailer(crcDelta: UInt32 = 0) -> [UInt8] {
        let crc = content.withUnsafeBytes { CRC32.update(0, $0) } &+ crcDelta
        let body = Body().varint(lists).varint(items).varint(0).varint(UInt64(content.count)).raw(FrameBytes.be32(crc))
        return Body().u8(0x04).varint(UInt64(body.bytes.count)).bytes + body.bytes
    }

    /// The content with its trailer, gzipped: a snapshot file.
    public var file: [UInt8] { Self.gzip(content + trailer()) }

    /// `input` gzipped (RFC 1952), at the smallest size; empty if zlib fails.
    public static func gzip(_ input: [UInt8]) -> [UInt8] {
        (try? input.withUnsafeBytes { (raw) throws(SnapshotError) in try Gzip.compress(raw, level: 9) }) ?? []
    }
}
