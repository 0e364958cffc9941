import ChecklistModel
import ChecklistSnapshot
import ChecklistTransfer
import Foundation
import Testing

/// The file formats of `checklist export`/`import`: detection, our JSON,
/// the apps' property lists (XML and binary), and documents as snapshots.
@Suite(.timeLimit(.minutes(10))) struct DocumentFormatTests {
    /// Checklists.plist as the apps' PropertyListEncoder writes it: lists of
    /// {name, iconName, items: [{text, checked, dueDate, shouldRemind, itemID}]}.
    static var appLists: [Any] { [
        ["name": "Birthdays", "iconName": "Birthdays", "items": [
            ["text": "Anna", "checked": false, "dueDate": Date(timeIntervalSince1970: 1_700_000_000), "shouldRemind": true, "itemID": 0],
            ["text": "Bob 🎂", "checked": true, "shouldRemind": false, "itemID": 3],
        ]] as [String: Any],
        ["name": "Groceries", "iconName": "Groceries", "items": [] as [Any]] as [String: Any],
    ] }

    static func expectAppLists(_ document: ChecklistDocument) {
        #expect(document.lists.map(\.name) == ["Birthdays", "Groceries"])
        #expect(document.lists.map(\.icon) == ["Birthdays", "Groceries"])
        let items = document.lists[0].items
        #expect(items.map(\.id) == [ItemID(1), ItemID(4)])
        #expect(items[0].fields == ItemFields(text: "Anna", checked: false, due: 1_700_000_000, remind: true))
        #expect(items[1].fields == ItemFields(text: "Bob 🎂", checked: true))
        #expect(document.lists[1].items.isEmpty)
    }

    @Test(arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func appsPropertyList(_ format: PropertyListSerialization.PropertyListFormat) throws {
        let data = Array(try PropertyListSerialization.data(fromPropertyList: Self.appLists, format: format, options: 0))
        #expect(TransferFormat.detect(data) == .plist)
        Self.expectAppLists(try ChecklistDocument(propertyList: data))
    }

    @Test func propertyListRoundTrip() throws {
        let document = try ChecklistDocument(propertyList: Array(try PropertyListSerialization.data(
            fromPropertyList: Self.appLists, format: .xml, options: 0)))
        Self.expectAppLists(try ChecklistDocument(propertyList: try document.propertyList()))
    }

    @Test func shoppingVariantAndErrors() throws {
        let shopping: [Any] = [["name": "Shop", "items": [["name": "Milk", "price": 2.49, "inShoppingList": true]]] as [String: Any]]
        let document = try ChecklistDocument(propertyList: Array(try PropertyListSerialization.data(
            fromPropertyList: shopping, format: .binary, options: 0)))
        #expect(document.lists[0].icon == "No Icon")
        #expect(document.lists[0].items[0].fields == ItemFields(text: "Milk", checked: true, price: 249))

        let noText: [Any] = [["name": "L", "items": [["checked": true]]] as [String: Any]]
        #expect(throws: TransferError.self) {
            try ChecklistDocument(propertyList: Array(try PropertyListSerialization.data(fromPropertyList: noText, format: .xml, options: 0)))
        }
        let archive: [String: Any] = ["$archiver": "NSKeyedArchiver", "$objects": [] as [Any]]
        do {
            _ = try ChecklistDocument(propertyList: Array(try PropertyListSerialization.data(fromPropertyList: archive, format: .binary, options: 0)))
            Issue.record("a keyed archive was accepted")
        } catch let error as TransferError {
            #expect(error.message.contains("keyed archive"))
        }
    }

    @Test func jsonReadsWhatItWritesAndFillsGaps() throws {
        var text: [UInt8] = []
        var writer = try JSONDocumentWriter { text += $0 }
        try writer.beginList(id: ListID(2), name: "Gro\"ceries\n", icon: "Groceries", revision: 4, nextItemID: ItemID(9))
        try writer.item(Item(id: ItemID(1), fields: ItemFields(text: "Milk \\ 🥛", checked: true, due: -5, remind: true, price: 249)))
        try writer.item(Item(id: ItemID(8), fields: ItemFields(text: "\u{1}")))
        try writer.beginList(id: ListID(3), name: "Empty", icon: "", revision: 1, nextItemID: ItemID(1))
        try writer.finish()
        #expect(TransferFormat.detect(text) == .json)
        let document = try ChecklistDocument(json: text)
        #expect(document == ChecklistDocument(lists: [
            .init(id: ListID(2), name: "Gro\"ceries\n", icon: "Groceries", revision: 4, nextItemID: ItemID(9), items: [
                .init(id: ItemID(1), fields: ItemFields(text: "Milk \\ 🥛", checked: true, due: -5, remind: true, price: 249)),
                .init(id: ItemID(8), fields: ItemFields(text: "\u{1}")),
            ]),
            .init(id: ListID(3), name: "Empty", icon: "", revision: 1, nextItemID: ItemID(1)),
        ]))

        // Hand-written: a bare array, only names and texts.
        let minimal = try ChecklistDocument(json: Array(#"[{"name": "To Do", "items": [{"text": "Walk the dog"}, {"id": 5, "text": "x"}]}]"#.utf8))
        let reader = try SnapshotReader(name: "test", input: ByteInput(try minimal.snapshotFile(source: "test", createdAt: 0)).fill)
        let back = try ChecklistDocument(snapshot: reader)
        #expect(back.lists.count == 1)
        #expect(back.lists[0].id == ListID(ChecklistDocument.firstUnkeptListID))
        #expect(back.lists[0].revision == 2)
        #expect(back.lists[0].nextItemID == ItemID(7))
        #expect(back.lists[0].items.map(\.id) == [ItemID(6), ItemID(5)])

        do {
            _ = try ChecklistDocument(json: Array(#"{"lists": [{"name": "A", "items": [{"checked": true}]}]}"#.utf8))
            Issue.record("an item without text was accepted")
        } catch let error as TransferError {
            #expect(error.message.contains("lists[0].items[0]"))
            #expect(error.message.contains("text"))
        }
    }

    @Test func detection() {
        #expect(TransferFormat.detect([0x1F, 0x8B, 0x08]) == .snapshot)
        #expect(TransferFormat.detect(Array("\u{FEFF}  {\"lists\": []}".utf8)) == .json)
        #expect(TransferFormat.detect(Array("<?xml version=\"1.0\"?><plist>".utf8)) == .plist)
        #expect(TransferFormat.detect(Array("hello".utf8)) == nil)
        #expect(TransferFormat.detect([]) == nil)
    }

    @Test func snapshotToJSONStreamsAnyChunking() throws {
        let document = ChecklistDocument(lists: (1...3).map { l in
            .init(id: ListID(UInt64(l)), name: "L\(l)", items: (1...200).map { .init(id: ItemID(UInt64($0)), fields: ItemFields(text: "item \($0) of \(l)")) })
        })
        let file = try document.snapshotFile(source: "test", createdAt: 0)
        for piece in [1, 7, 4096, file.count] {
            var json: [UInt8] = []
            let converter = try SnapshotToJSON(name: "test") { json += $0 }
            var offset = 0
            while offset < file.count {
                try converter.feed(Array(file[offset..<min(file.count, offset + piece)]))
                offset += piece
            }
            try converter.finish()
            #expect(converter.items == 600)
            let back = try ChecklistDocument(json: json)
            #expect(back.lists.map(\.items) == document.lists.map(\.items))
        }
        // Cut short: the end says so.
        let converter = try SnapshotToJSON(name: "test") { _ in }
        try converter.feed(Array(file.prefix(file.count / 2)))
        #expect(throws: SnapshotError.self) { try converter.finish() }
    }
}

/// A byte array read by a `SnapshotReader`.
final class ByteInput {
    private let bytes: [UInt8]
    private var offset = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    func fill(_ buffer: UnsafeMutableRawBufferPointer) -> Int {
        let n = min(buffer.count, bytes.count - offset)
        bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + n)])) }
        offset += n
        return n
    }
}
