import ChecklistModel
import Foundation

// The Checklists JSON document (README.md, "Export and import"):
//
//     {"format": "checklists", "version": 1, "lists": [
//       {"id": 2, "name": "Groceries", "icon": "Groceries", "revision": 4, "nextItemID": 4, "items": [
//         {"id": 1, "text": "Milk", "checked": true, "remind": false},
//         {"id": 3, "text": "Eggs", "checked": false, "remind": false, "due": 1714554000, "price": 249}]}]}
//
// `due` is seconds since 1970-01-01T00:00:00Z, `price` integer minor units
// (cents). When reading, only `name` (lists) and `text` (items) are
// required: ids, revisions and flags may be left out (see
// `ChecklistDocument.snapshotFile`), and a bare array of lists is accepted.
extension ChecklistDocument {
    /// The `format` and `version` written and accepted.
    public static let jsonFormat = "checklists"
    public static let jsonVersion = 1

    private struct JSONRoot: Codable {
        var format: String?
        var version: Int?
        var lists: [JSONList]
    }

    private struct JSONList: Codable {
        var id: UInt64?
        var name: String
        var icon: String?
        var revision: UInt64?
        var nextItemID: UInt64?
        var items: [JSONItem]?
    }

    private struct JSONItem: Codable {
        var id: UInt64?
        var text: String
        var checked: Bool?
        var remind: Bool?
        var due: Int64?
        var price: Int64?
    }

    /// Reads a JSON document.
    /// - Throws: `TransferError` naming the path of what is wrong.
    public init(json data: [UInt8]) throws {
        let decoder = JSONDecoder()
        let lists: [JSONList]
        do {
            if let first = data.first(where: { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }), first == UInt8(ascii: "[") {
                lists = try decoder.decode([JSONList].self, from: Data(data))
            } else {
                let root = try decoder.decode(JSONRoot.self, from: Data(data))
                if let format = root.format, format != Self.jsonFormat {
                    throw TransferError("JSON: \"format\" is \"\(format)\", not \"\(Self.jsonFormat)\"")
                }
                if let version = root.version, version != Self.jsonVersion {
                    throw TransferError("JSON: version \(version) is not supported (this build reads version \(Self.jsonVersion))")
                }
                lists = root.lists
            }
        } catch let error as TransferError {
            throw error
        } catch let error as DecodingError {
            throw TransferError("JSON: " + Self.describe(error))
        }
        self.init(lists: lists.map(Self.list))
    }

    private static func list(_ l: JSONList) -> List {
        let entries = (l.items ?? []).map { i in
            Entry(id: i.id.map { ItemID($0) },
                  fields: ItemFields(text: i.text, checked: i.checked ?? false, due: i.due, remind: i.remind ?? false, price: i.price))
        }
        return List(id: l.id.map { ListID($0) }, name: l.name, icon: l.icon ?? "No Icon", revision: l.revision,
                    nextItemID: l.nextItemID.map { ItemID($0) }, items: entries)
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let p = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? "." + $0.stringValue }.joined()
            return p.isEmpty ? "the document" : String(p.drop { $0 == "." })
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context)): \"\(key.stringValue)\" is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return "\(path(context)): \(context.debugDescription)"
        case .dataCorrupted(let context): return "\(path(context)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
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
