import ChecklistModel
import ChecklistTransfer
import Foundation
import Testing

/// Keyed archives (NSKeyedArchiver) and binary property lists: the
/// Shopping List app's items.plist round trip, hostile archives, and our
/// binary reader against Foundation's writer.
@Suite(.timeLimit(.minutes(10))) struct KeyedArchiveTests {
    static let shopping = ChecklistDocument(lists: [.init(name: "items", items: [
        .init(fields: ItemFields(text: "Milk", checked: true, price: 299), clientKey: "6F9619FF-8B86-D011-B42D-00C04FC964FF"),
        .init(fields: ItemFields(text: "Crème fraîche 🧀", price: 125), clientKey: "0E984725-C51C-4BF4-9960-E1C80E27ABA0"),
        .init(fields: ItemFields(text: "Water", checked: false, price: 0), clientKey: "A3BB189E-8BF9-3888-9912-ACE4E6543002"),
    ])])

    @Test func roundTripKeepsNamesPricesFlagsAndUUIDs() throws {
        let archive = try Self.shopping.keyedArchive()
        #expect(TransferFormat.detect(archive) == .plist)
        let back = try ChecklistDocument(propertyList: archive, nameForItems: "items")
        #expect(back.lists.count == 1)
        #expect(back.lists[0].name == "items")
        #expect(back.lists[0].items.map(\.fields) == Self.shopping.lists[0].items.map(\.fields))
        #expect(back.lists[0].items.map(\.clientKey) == Self.shopping.lists[0].items.map(\.clientKey))
        // And out again: the same bytes.
        #expect(try back.keyedArchive() == archive)
    }

    @Test func archiveEnvelopeAsNSKeyedArchiverLaysItOut() throws {
        let root = try PropertyListValue.parse(try Self.shopping.keyedArchive())
        guard case .dictionary(let d) = root, case .array(let objects)? = d["$objects"] else {
            Issue.record("not an archive: \(root)")
            return
        }
        #expect(d["$archiver"] == .string("NSKeyedArchiver"))
        #expect(d["$version"] == .integer(100000))
        #expect(d["$top"] == .dictionary(["root": .uid(1)]))
        #expect(objects.first == .string("$null"))
        #expect(objects.contains(.dictionary(["$classname": .string("Shopping_List.Item"),
                                              "$classes": .array([.string("Shopping_List.Item"), .string("NSObject")])])))
    }

    @Test func itemsWithoutAKeyGetAStableUUID() throws {
        let document = ChecklistDocument(lists: [.init(id: ListID(7), name: "L", items: [.init(id: ItemID(3), fields: ItemFields(text: "x"))])])
        let back = try ChecklistDocument(propertyList: try document.keyedArchive())
        #expect(back.lists[0].items[0].clientKey == "00000000-0007-8000-8000-000000000003")
        #expect(ChecklistDocument.generatedUUID(list: 7, item: 3) != ChecklistDocument.generatedUUID(list: 3, item: 7))
        #expect(throws: TransferError.self) { try ChecklistDocument(lists: []).keyedArchive() }
    }

    /// A small archive of `objects` under `$top.root`.
    static func archive(_ objects: [PropertyListValue], top: PropertyListValue = .uid(1)) -> [UInt8] {
        BinaryPropertyListWriter().write(.dictionary([
            "$archiver": .string("NSKeyedArchiver"), "$version": .integer(100000),
            "$top": .dictionary(["root": top]), "$objects": .array([.string("$null")] + objects),
        ]))
    }

    static let arrayClass = PropertyListValue.dictionary(["$classname": .string("NSMutableArray"),
                                                          "$classes": .array([.string("NSMutableArray"), .string("NSArray"), .string("NSObject")])])

    @Test(arguments: [
        ("UID out of range", archive([.dictionary(["$class": .uid(2), "NS.objects": .array([.uid(9)])]), arrayClass]), "UID 9 is out of range"),
        ("a cycle", archive([.dictionary(["$class": .uid(2), "NS.objects": .array([.uid(1)])]), arrayClass]), "cycle"),
        ("wrong type", archive([.dictionary(["$class": .uid(2), "NS.objects": .string("x")]), arrayClass]), "not an array"),
        ("no class", archive([.dictionary(["NS.objects": .array([])])]), "\"$class\" is missing"),
        ("too deep", archive((1...80).map { i in .dictionary(["$class": .uid(81), "NS.objects": .array([.uid(UInt64(i + 1))])]) }
                             + [arrayClass]), "deeper than"),
        ("not NSKeyedArchiver", BinaryPropertyListWriter().write(.dictionary(["$archiver": .string("Other")])), "not \"NSKeyedArchiver\""),
    ])
    func hostileArchivesAreNamed(_ what: String, _ bytes: [UInt8], _ expected: String) {
        do {
            _ = try ChecklistDocument(propertyList: bytes)
            Issue.record("\(what) was accepted")
        } catch let error as TransferError {
            #expect(error.message.contains(expected), "\(what): \(error.message)")
        } catch {
            Issue.record("\(what): \(error)")
        }
    }

    @Test func binaryReaderReadsFoundationsWriter() throws {
        let value: [String: Any] = ["s": "ascii", "u": "ünï 🧀", "i": [0, 255, 256, 65536, -1, Int64.max] as [Any], "r": 2.5,
                                    "b": true, "d": Date(timeIntervalSinceReferenceDate: 12.5), "data": Data([1, 2, 3]),
                                    "long": String(repeating: "x", count: 300), "many": Array(0..<20)]
        let bytes = Array(try PropertyListSerialization.data(fromPropertyList: value, format: .binary, options: 0))
        let read = try BinaryPropertyListReader(bytes).root()
        #expect(read == .dictionary([
            "s": .string("ascii"), "u": .string("ünï 🧀"), "i": .array([0, 255, 256, 65536, -1, Int64.max].map { .integer($0) }),
            "r": .real(2.5), "b": .bool(true), "d": .date(12.5), "data": .data([1, 2, 3]),
            "long": .string(String(repeating: "x", count: 300)), "many": .array((0..<20).map { .integer($0) }),
        ]))
        // Our writer's output reads back in Foundation too.
        let ours = BinaryPropertyListWriter().write(read)
        let again = try PropertyListSerialization.propertyList(from: Data(ours), options: [], format: nil) as? [String: Any]
        #expect(again?["u"] as? String == "ünï 🧀")
        #expect(try BinaryPropertyListReader(ours).root() == read)
    }

    @Test func damagedBinaryPropertyListsAreRefused() throws {
        let good = BinaryPropertyListWriter().write(.array([.string("a"), .integer(1)]))
        // The trailer's last 24 bytes: number of objects, top object, offset table start.
        var badTable = good
        badTable[badTable.count - 1] = 0x7F
        var badTop = good
        badTop[badTop.count - 9] = 0x7F
        var badCount = good
        badCount[badCount.count - 17] = 0xFF
        var badMarker = good
        badMarker[8] = 0xB0  // the first object's marker: no such type
        for (bytes, expected) in [(Array(good.prefix(20)), "shorter"), (badTable, "offset table"), (badTop, "top object 127 is out of range"),
                                  (badCount, "does not fit"), (badMarker, "unknown marker")] {
            #expect(throws: TransferError.self) { try BinaryPropertyListReader(bytes).root() }
            do { _ = try BinaryPropertyListReader(bytes).root() } catch let e as TransferError { #expect(e.message.contains(expected), "\(e.message)") }
        }
    }

    @Test(arguments: [("2.99", 299), ("0.125", 13), ("-0.125", -13), ("1.005", 101), ("7", 700), ("0.004", 0), ("0.005", 1),
                      ("1e-05", 0), ("2.5E1", 2500), ("0.0", 0), ("1e17", nil), ("x", nil), ("1.2.3", nil)] as [(String, Int64?)])
    func pricesRoundHalfAwayFromZero(_ text: String, _ cents: Int64?) {
        #expect(Price.cents(decimal: text) == cents)
    }

    @Test func floatPricesAreReadAsWritten() {
        #expect(Price.cents(units: Double(Float(2.99))) == 299)  // 2.990000009536743
        #expect(Price.cents(units: 2.675) == 268)                 // 2.67499999999999982236431605997495353221893310546875
    }

    @Test func seedIsOneListNamedAfterTheFile() throws {
        let seed: [Any] = [["name": "Eggs", "price": 2.99], ["name": "Bananas", "price": 0.5]]
        let data = Array(try PropertyListSerialization.data(fromPropertyList: seed, format: .xml, options: 0))
        let document = try ChecklistDocument(propertyList: data, nameForItems: "seed")
        #expect(document.lists.map(\.name) == ["seed"])
        #expect(document.lists[0].items.map(\.fields) == [ItemFields(text: "Eggs", price: 299), ItemFields(text: "Bananas", price: 50)])

        let json = try ChecklistDocument(json: Array(#"[{"name": "Eggs", "price": 2.99, "uuid": "k"}, {"name": "Tea", "price": 1}]"#.utf8),
                                         nameForItems: "seed")
        #expect(json.lists.map(\.name) == ["seed"])
        #expect(json.lists[0].items.map(\.fields.price) == [299, 100])
        #expect(json.lists[0].items.map(\.clientKey) == ["k", nil])
        // Lists without items stay lists.
        #expect(try ChecklistDocument(json: Array(#"[{"name": "To Do"}]"#.utf8)).lists.map(\.name) == ["To Do"])
    }
}
