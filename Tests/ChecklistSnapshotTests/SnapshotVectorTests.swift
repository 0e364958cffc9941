import ChecklistModel
@testable import ChecklistSnapshot
import ChecklistSnapshotFixtures
import ChecklistWire
import Foundation
import Testing

/// Golden files in Protocol/vectors/snapshot, checked both ways: decode the
/// file and compare with its JSON meaning; encode the meaning and compare
/// the uncompressed bytes (compressed bytes depend on the zlib build, so
/// they are never compared). Regenerate with
/// `CHECKLIST_WRITE_VECTORS=1 swift test --filter SnapshotVectorTests`.
@Suite(.serialized, .timeLimit(.minutes(10))) struct SnapshotVectorTests {
    static var directory: String { VectorFiles.directory }
    static var writing: Bool { VectorFiles.writing }

    // MARK: meaning, as JSON

    struct ItemJSON: Codable, Equatable {
        var id: UInt64, text: String, checked: Bool, remind: Bool, due: Int64?, price: Int64?, clientKey: String?
        init(_ item: Item) {
            id = item.id.rawValue; text = item.text; checked = item.checked
            remind = item.fields.remind; due = item.fields.due; price = item.fields.price; clientKey = item.fields.clientKey
        }
        var item: Item {
            Item(id: ItemID(id), fields: ItemFields(text: text, checked: checked, due: due, remind: remind, price: price,
                                                    clientKey: clientKey))
        }
    }

    struct ListJSON: Codable, Equatable {
        var namespace: String, id: UInt64, name: String, icon: String, revision: UInt64, nextItemID: UInt64, items: [ItemJSON]
    }

    struct SnapshotJSON: Codable, Equatable {
        var description: String
        var file: String
        var header: HeaderJSON
        var lists: [ListJSON]
        /// IDEMPOTENCY records (section 3.8), in file order; absent in
        /// snapshots without them.
        var idempotency: [IdempotencyJSON]?
        var trailer: TrailerJSON
        /// The uncompressed content, hex.
        var raw: String
    }

    struct RunJSON: Codable, Equatable {
        var first: UInt64, count: UInt64
    }

    struct AnswerJSON: Codable, Equatable {
        var sequence: UInt64, list: UInt64, revision: UInt64, inserted: [RunJSON]
    }

    struct IdempotencyJSON: Codable, Equatable {
        var namespace: String, client: UInt64, floor: UInt64, answers: [AnswerJSON]

        init(_ record: SnapshotIdempotency) {
            namespace = record.namespace.rawValue
            client = record.client
            floor = record.floor
            answers = record.answers.map { a in
                AnswerJSON(sequence: a.sequence, list: a.list.rawValue, revision: a.revision,
                           inserted: a.inserted.map { RunJSON(first: $0.first.rawValue, count: $0.count) })
            }
        }

        var record: SnapshotIdempotency {
            SnapshotIdempotency(namespace: Namespace(namespace), client: client, floor: floor, answers: answers.map { a in
                SnapshotIdempotency.Answer(sequence: a.sequence, list: ListID(a.list), revision: a.revision,
                                           inserted: a.inserted.map { ItemIDRun(first: ItemID($0.first), count: $0.count) })
            })
        }
    }

    struct HeaderJSON: Codable, Equatable {
        var createdAt: Int64, source: String, listCount: UInt64, itemCount: UInt64, startLSN: UInt64, nextListID: UInt64
        var header: SnapshotHeader {
            SnapshotHeader(createdAt: createdAt, source: source, listCount: listCount, itemCount: itemCount, startLSN: startLSN, nextListID: ListID(nextListID))
        }
    }

    struct TrailerJSON: Codable, Equatable {
        var listCount: UInt64, itemCount: UInt64, endLSN: UInt64, contentBytes: UInt64, crc32: UInt32
    }

    struct ErrorCaseJSON: Codable {
        var file: String
        var description: String
        var maxRawBytes: UInt64?
        var maxRatio: UInt64?
        var ratioGraceBytes: UInt64?
        var code: String
        var offset: UInt64?
    }

    /// The apps' demo data ("Birthdays", "Groceries", "Cool Apps", "To Do").
    static func demoMeaning() -> (SnapshotHeader, [ListJSON]) {
        func item(_ id: UInt64, _ text: String, checked: Bool = false, due: Int64? = nil, remind: Bool = false, price: Int64? = nil) -> ItemJSON {
            ItemJSON(Item(id: ItemID(id), fields: ItemFields(text: text, checked: checked, due: due, remind: remind, price: price)))
        }
        let lists = [
            ListJSON(namespace: "default", id: 1, name: "Birthdays", icon: "Birthdays", revision: 3, nextItemID: 3,
                     items: [item(1, "Anna", due: 1_700_000_000, remind: true), item(2, "Bob 🎂", checked: true)]),
            ListJSON(namespace: "default", id: 2, name: "Groceries", icon: "Groceries", revision: 7, nextItemID: 5,
                     items: [item(4, "Eggs", price: 249), item(1, "Milk", checked: true, price: 119), item(3, "Eat ice cream", due: -86_400)]),
            ListJSON(namespace: "default", id: 4, name: "Cool Apps", icon: "No Icon", revision: 1, nextItemID: 1, items: []),
            ListJSON(namespace: "family", id: 5, name: "To Do", icon: "Chores", revision: 6, nextItemID: 6,
                     items: [item(1, "Walk the dog"), item(2, "Brush my teeth", checked: true), item(3, "Learn iOS development"), item(5, "Soccer practice", remind: true)]),
        ]
        let header = SnapshotHeader(createdAt: 1_764_460_800, source: "checklistd/1.0 vectors", listCount: 4, itemCount: 9, startLSN: 41, nextListID: ListID(6))
        return (header, lists)
    }

    func encode(header: SnapshotHeader, lists: [ListJSON], idempotency: [IdempotencyJSON] = [],
                endLSN: LSN) throws -> ([UInt8], SnapshotWriter.Summary) {
        var out: [UInt8] = []
        let writer = try SnapshotWriter(header: header) { (chunk) throws(SnapshotError) in out.append(contentsOf: chunk) }
        for list in lists {
            try writer.writeList(SnapshotList(namespace: Namespace(list.namespace), id: ListID(list.id), name: list.name, icon: list.icon,
                                              revision: list.revision, nextItemID: ItemID(list.nextItemID), itemCount: UInt64(list.items.count)))
            for item in list.items { try writer.writeItem(item.item) }
        }
        for client in idempotency { try writer.writeIdempotency(client.record) }
        let summary = try writer.finish(endLSN: endLSN)
        return (out, summary)
    }

    static func hex(_ bytes: [UInt8]) -> String { VectorFiles.hex(bytes) }
    static func unhex(_ s: String) -> [UInt8] { VectorFiles.unhex(s) }

    func load<T: Decodable>(_ name: String, as: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(readFile(Self.directory + "/" + name)))
    }

    // MARK: tests

    @Test func demoSnapshotBothWays() throws {
        if Self.writing { try writeVectors() }
        let vector = try load("demo.json", as: SnapshotJSON.self)
        #expect(vector.idempotency == nil)
        try checkBothWays(vector)
    }

    /// `idempotency.json` and `idempotency.ckss.gz` are made by
    /// Protocol/vectors/generate.py from SNAPSHOT.md alone (its own records,
    /// CRC and fixed-Huffman gzip): this build reads its IDEMPOTENCY records
    /// exactly, and writes the same content from the same meaning.
    @Test func idempotencySnapshotBothWays() throws {
        let vector = try load("idempotency.json", as: SnapshotJSON.self)
        let records = try #require(vector.idempotency)
        #expect(records.count == 3)
        #expect(records.contains { $0.answers.isEmpty && $0.floor > 0 }, "a client with only a floor")
        #expect(records.contains { $0.answers.contains { $0.inserted.count > 1 } }, "an answer of several runs")
        #expect(records.contains { $0.answers.contains { $0.inserted.isEmpty } }, "an answer without inserts")
        #expect(vector.lists.contains { $0.items.contains { $0.clientKey != nil } }, "an item with a client key")
        try checkBothWays(vector)
    }

    /// Decodes the vector's file and compares with its meaning; encodes the
    /// meaning and compares with its raw content.
    func checkBothWays(_ vector: SnapshotJSON) throws {
        // Decode the golden file.
        let reader = try SnapshotReader(path: Self.directory + "/" + vector.file)
        #expect(reader.header == vector.header.header)
        var lists: [ListJSON] = []
        var idempotency: [IdempotencyJSON] = []
        while let record = try reader.next() {
            switch record {
            case .list(let l):
                lists.append(ListJSON(namespace: l.namespace.rawValue, id: l.id.rawValue, name: l.name, icon: l.icon,
                                      revision: l.revision, nextItemID: l.nextItemID.rawValue, items: []))
            case .item(let item): lists[lists.count - 1].items.append(ItemJSON(item))
            case .idempotency(let client): idempotency.append(IdempotencyJSON(client))
            }
        }
        #expect(lists == vector.lists)
        #expect(idempotency == (vector.idempotency ?? []))
        let t = try #require(reader.trailer)
        #expect(TrailerJSON(listCount: t.listCount, itemCount: t.itemCount, endLSN: t.endLSN, contentBytes: t.contentBytes, crc32: t.crc32) == vector.trailer)
        // The file's content is the documented raw bytes.
        #expect(try gunzip(readFile(Self.directory + "/" + vector.file)) == Self.unhex(vector.raw))
        // Encode the meaning: the same raw bytes.
        let (compressed, summary) = try encode(header: vector.header.header, lists: vector.lists, idempotency: vector.idempotency ?? [],
                                               endLSN: vector.trailer.endLSN)
        #expect(try gunzip(compressed) == Self.unhex(vector.raw))
        #expect(summary.trailer.crc32 == vector.trailer.crc32)
        #expect(CRC32.checksum(Array(Self.unhex(vector.raw).prefix(Int(vector.trailer.contentBytes)))) == vector.trailer.crc32)
    }

    @Test func errorVectors() throws {
        let cases = try load("errors.json", as: [ErrorCaseJSON].self)
        #expect(cases.count >= 4)
        for c in cases {
            let limits = SnapshotLimits(maxRawBytes: c.maxRawBytes ?? SnapshotLimits.default.maxRawBytes,
                                        maxRatio: c.maxRatio ?? SnapshotLimits.default.maxRatio,
                                        ratioGraceBytes: c.ratioGraceBytes ?? SnapshotLimits.default.ratioGraceBytes)
            let path = Self.directory + "/" + c.file
            guard let error = readSnapshotError(atPath: path, limits: limits) else {
                Issue.record("\(c.file) must fail with \(c.code)")
                continue
            }
            #expect(error.code.name == c.code, "\(c.file): \(error)")
            #expect(error.file == path)
            if let offset = c.offset { #expect(error.offset == offset, "\(c.file): \(error)") }
        }
    }


    // MARK: generation

    func writeVectors() throws {
        let (header, lists) = Self.demoMeaning()
        let (compressed, summary) = try encode(header: header, lists: lists, endLSN: 44)
        let raw = try gunzip(compressed)
        writeFile(Self.directory + "/demo.ckss.gz", compressed)
        let t = summary.trailer
        let vector = SnapshotJSON(description: "The apps' demo lists as a snapshot (Protocol/SNAPSHOT.md). `raw` is the uncompressed content.",
                                  file: "demo.ckss.gz",
                                  header: HeaderJSON(createdAt: header.createdAt, source: header.source, listCount: header.listCount,
                                                     itemCount: header.itemCount, startLSN: header.startLSN, nextListID: header.nextListID.rawValue),
                                  lists: lists,
                                  trailer: TrailerJSON(listCount: t.listCount, itemCount: t.itemCount, endLSN: t.endLSN, contentBytes: t.contentBytes, crc32: t.crc32),
                                  raw: Self.hex(raw))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(vector).write(to: URL(fileURLWithPath: Self.directory + "/demo.json"))

        // Error cases.
        writeFile(Self.directory + "/truncated.ckss.gz", Array(compressed.dropLast(12)))
        var badCRC = raw
        badCRC[badCRC.count - 1] ^= 0xFF // the last byte of the trailer's crc32
        writeFile(Self.directory + "/bad-crc.ckss.gz", try gzip(badCRC))
        var bomb = RawSnapshot()
        bomb.header()
        for _ in 0..<4 { bomb.record(0x40, [UInt8](repeating: 0, count: (1 << 20) - 16)) }
        bomb.trailer(lists: 0, items: 0)
        writeFile(Self.directory + "/bomb.ckss.gz", try gzip(bomb.bytes, level: 9))
        var flipped = compressed
        flipped[flipped.count / 2] ^= 0x01
        writeFile(Self.directory + "/flipped-byte.ckss.gz", flipped)
        let cases = [
            ErrorCaseJSON(file: "truncated.ckss.gz", description: "demo.ckss.gz without its last 12 bytes", code: "TRUNCATED_SNAPSHOT"),
            ErrorCaseJSON(file: "bad-crc.ckss.gz", description: "demo content with the trailer's CRC-32 altered, validly gzipped",
                          code: "SNAPSHOT_CHECKSUM", offset: t.contentBytes),
            ErrorCaseJSON(file: "bomb.ckss.gz", description: "4 MiB of zero-filled extension records; read with maxRawBytes 1 MiB",
                          maxRawBytes: 1 << 20, code: "DECOMPRESSION_LIMIT"),
            ErrorCaseJSON(file: "bomb.ckss.gz", description: "the same; read with maxRatio 100 after a 1 MiB grace",
                          maxRatio: 100, ratioGraceBytes: 1 << 20, code: "DECOMPRESSION_LIMIT"),
            ErrorCaseJSON(file: "flipped-byte.ckss.gz", description: "demo.ckss.gz with one bit of the compressed data flipped", code: "CORRUPT_SNAPSHOT"),
        ]
        try encoder.encode(cases).write(to: URL(fileURLWithPath: Self.directory + "/errors.json"))
    }
}
