import ChecklistModel
import ChecklistSnapshot
import Foundation
import Testing

/// The snapshot file inside the EXPORT/IMPORT golden vectors was made by
/// Protocol/vectors/generate.py from SNAPSHOT.md alone (its own records,
/// CRC and fixed-Huffman gzip): this build's reader must take it, exactly.
@Suite(.timeLimit(.minutes(10))) struct VectorSnapshotTests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Protocol/vectors").standardized

    static func data(_ name: String) throws -> [UInt8] {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: vectors.appendingPathComponent(name + ".json"))) as? [String: Any]
        let hex = try #require((json?["fields"] as? [String: Any])?["data"] as? String)
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(try #require(UInt8(hex[index..<next], radix: 16)))
            index = next
        }
        return bytes
    }

    @Test func chunksOfTheVectorsMakeTheSnapshotOfImportData() throws {
        let whole = try Self.data("import-data")
        #expect(try Self.data("export-chunk-more") + Self.data("export-chunk-end") == whole)
        let input = ByteInput(whole)
        let reader = try SnapshotReader(name: "import-data vector", input: input.fill)
        #expect(reader.header.source == "checklistd/1.0 EXPORT")
        #expect(reader.header.startLSN == 0)
        var records: [SnapshotRecord] = []
        while let record = try reader.next() { records.append(record) }
        #expect(records == [
            .list(SnapshotList(namespace: .default, id: ListID(2), name: "Groceries", icon: "Groceries", revision: 4,
                               nextItemID: ItemID(4), itemCount: 2)),
            .item(Item(id: ItemID(1), fields: ItemFields(text: "Milk", checked: true))),
            .item(Item(id: ItemID(3), fields: ItemFields(text: "Eggs", price: 249))),
        ])
        #expect(reader.trailer?.listCount == 1 && reader.trailer?.itemCount == 2)
    }
}
