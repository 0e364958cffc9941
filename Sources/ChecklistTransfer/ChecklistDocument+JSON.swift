import ChecklistModel

// The Checklists JSON document (docs/EXPORT-IMPORT.md, "Our JSON"):
//
//     {"format": "checklists", "version": 1, "lists": [
//       {"id": 2, "name": "Groceries", "icon": "Groceries", "revision": 4, "nextItemID": 4, "items": [
//         {"id": 1, "text": "Milk", "checked": true, "remind": false},
//         {"id": 3, "text": "Eggs", "checked": false, "remind": false, "due": 1714554000, "price": 249}]}]}
//
// `due` is seconds since 1970-01-01T00:00:00Z, `price` integer minor units
// (cents). When reading, only `name` (lists) and `text` (items) are
// required: ids, revisions and flags may be left out (see
// `ChecklistDocument.snapshotFile`), unknown keys are skipped, and a bare
// array of lists is accepted, or a bare array of items (one list; see
// `JSONDocumentScanner` for the Shopping List shape `{name, price}` with
// the price in currency units). An item may carry `clientKey` (or `uuid`).
extension ChecklistDocument {
    /// The `format` and `version` written and accepted.
    public static let jsonFormat = "checklists"
    public static let jsonVersion = 1

    /// Reads a JSON document held in memory (the streaming import is
    /// `JSONSnapshotStream`; both read with `JSONDocumentScanner`).
    /// - Parameter nameForItems: the name of the list made from a bare
    ///   array of items.
    /// - Throws: `TransferError` naming the path of what is wrong.
    public init(json data: [UInt8], nameForItems: String = "Checklist") throws {
        let scanner = JSONDocumentScanner(reader: JSONByteReader(readAt: { offset, buffer in
            guard offset < UInt64(data.count) else { return 0 }
            let n = min(buffer.count, data.count - Int(offset))
            data.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<Int(offset) + n])) }
            return n
        }), nameForItems: nameForItems)
        var lists: [List] = []
        for info in try scanner.scan() {
            var entries: [Entry] = []
            try scanner.startItems(of: info)
            while let entry = try scanner.nextItem() { entries.append(entry) }
            lists.append(List(id: info.id.map { ListID($0) }, name: info.name, icon: info.icon ?? "No Icon", revision: info.revision,
                              nextItemID: info.nextItemID.map { ItemID($0) }, items: entries))
        }
        self.init(lists: lists)
    }
}

/// Writes the JSON document one list and one item at a time, so that a
/// snapshot of any size converts in bounded memory. Each item is one line.
public struct JSONDocumentWriter {
    private let output: ([UInt8]) throws -> Void
    private var buffer: [UInt8] = []
    private var listsWritten = 0
    private var itemsInList = 0
    private var inList = false

    public init(output: @escaping ([UInt8]) throws -> Void) throws {
        self.output = output
        append("{\"format\":\"\(ChecklistDocument.jsonFormat)\",\"version\":\(ChecklistDocument.jsonVersion),\"lists\":[")
    }

    public mutating func beginList(id: ListID, name: String, icon: String, revision: Revision, nextItemID: ItemID) throws {
        if inList { append("]}") }
        append(listsWritten == 0 ? "\n" : ",\n")
        append("{\"id\":\(id.rawValue),\"name\":")
        appendString(name)
        append(",\"icon\":")
        appendString(icon)
        append(",\"revision\":\(revision),\"nextItemID\":\(nextItemID.rawValue),\"items\":[")
        listsWritten += 1
        itemsInList = 0
        inList = true
        try flushIfLarge()
    }

    public mutating func item(_ item: Item) throws {
        append(itemsInList == 0 ? "\n" : ",\n")
        append("{\"id\":\(item.id.rawValue),\"text\":")
        appendString(item.fields.text)
        append(",\"checked\":\(item.fields.checked),\"remind\":\(item.fields.remind)")
        if let due = item.fields.due { append(",\"due\":\(due)") }
        if let price = item.fields.price { append(",\"price\":\(price)") }
        if let key = item.fields.clientKey {
            append(",\"clientKey\":")
            appendString(key)
        }
        append("}")
        itemsInList += 1
        try flushIfLarge()
    }

    public mutating func finish() throws {
        if inList { append("]}") }
        append("\n]}\n")
        try output(buffer)
        buffer.removeAll()
    }

    private mutating func flushIfLarge() throws {
        if buffer.count >= 1 << 16 {
            try output(buffer)
            buffer.removeAll(keepingCapacity: true)
        }
    }

    private mutating func append(_ text: String) {
        buffer.append(contentsOf: text.utf8)
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    private mutating func appendString(_ text: String) {
        buffer.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): buffer.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): buffer.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: buffer.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: buffer.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: buffer.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                buffer.append(contentsOf: Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: buffer.append(byte)
            }
        }
        buffer.append(UInt8(ascii: "\""))
    }
}
