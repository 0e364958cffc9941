import ChecklistModel

/// The structure of our JSON document (`ChecklistDocument+JSON.swift`)
/// read from a `JSONByteReader`, in two passes so that memory stays bounded
/// by the number of lists, never the number of items:
///
/// 1. `scan()` reads the whole file once, checks every list and item, and
///    keeps per list only its header fields, its item count, its highest
///    item id and where its `items` array starts;
/// 2. `items(of:_:)` goes back to one list's array and hands out its items.
///
/// A bare array whose first element is an item (`text`, or `name` and
/// `price`, and no `items`) is one list of items named `nameForItems`.
/// Items keyed by `text` are ours (`price` in integer cents); items keyed
/// by `name` take the Shopping List app's shape (`price` in currency units,
/// `inShoppingList`, `uuid`).
final class JSONDocumentScanner {
    /// One list as the first pass saw it.
    struct ListInfo {
        var path: String
        var id: UInt64?
        var name: String
        var icon: String?
        var revision: UInt64?
        var nextItemID: UInt64?
        /// Offset of the `[` of its items, nil when it has none.
        var itemsOffset: UInt64?
        var itemsPath: String
        var itemCount: UInt64 = 0
        var highestItemID: UInt64 = 0
        /// Items without an id (numbered after the highest).
        var unnumbered: UInt64 = 0
    }

    private let reader: JSONByteReader
    private let nameForItems: String

    init(reader: JSONByteReader, nameForItems: String) {
        self.reader = reader
        self.nameForItems = nameForItems
    }

    /// The first pass: every list of the document, in file order.
    func scan() throws -> [ListInfo] {
        reader.seek(to: 0)
        if try reader.peek() == 0xEF {  // a UTF-8 byte-order mark
            guard try reader.take() == 0xEF, try reader.take() == 0xBB, try reader.take() == 0xBF else { throw reader.error("not UTF-8 JSON") }
        }
        var lists: [ListInfo]?
        switch try reader.peekToken() {
        case UInt8(ascii: "["):
            lists = try listArray(prefix: "")
        case UInt8(ascii: "{"):
            try object("the document") { key in
                switch key {
                case "format":
                    let format = try self.reader.string()
                    guard format == ChecklistDocument.jsonFormat else {
                        throw TransferError("JSON: \"format\" is \"\(format)\", not \"\(ChecklistDocument.jsonFormat)\"")
                    }
                case "version":
                    let version = try self.reader.number()
                    guard version == String(ChecklistDocument.jsonVersion) else {
                        throw TransferError("JSON: version \(version) is not supported (this build reads version \(ChecklistDocument.jsonVersion))")
                    }
                case "lists": lists = try self.listArray(prefix: "lists")
                default: try self.reader.skipValue()
                }
            }
        default:
            throw reader.error("the document is neither an object nor an array")
        }
        guard try reader.peekToken() == nil else { throw reader.error("text after the end of the document") }
        guard let lists else { throw TransferError("JSON: the document: \"lists\" is missing") }
        return lists
    }

    /// Where the second pass is: the list whose items it reads and the
    /// index of the next one, nil once its array has ended.
    private var cursor: (list: ListInfo, index: Int)?

    /// The second pass: goes back to `list`'s items; `nextItem` reads them.
    func startItems(of list: ListInfo) throws {
        cursor = nil
        guard let start = list.itemsOffset else { return }
        reader.seek(to: start)
        try reader.expect(UInt8(ascii: "["), "an array")
        if try reader.peekToken() == UInt8(ascii: "]") {
            _ = try reader.take()
            return
        }
        cursor = (list, 0)
    }

    /// The next entry of the list `startItems` went to; nil after the last.
    func nextItem() throws -> Entry? {
        guard let (list, index) = cursor else { return nil }
        let path = "\(list.itemsPath)[\(index)]"
        let entry = try item(try fields(.item, path), path)
        cursor = try reader.separator(close: UInt8(ascii: "]")) ? (list, index + 1) : nil
        return entry
    }

    typealias Entry = ChecklistDocument.Entry

    private enum Mode { case list, item, either }

    /// What an object of a list or an item held.
    private struct Fields {
        var id: UInt64?, name: String?, icon: String?, revision: UInt64?, nextItemID: UInt64?
        var items: (offset: UInt64, count: UInt64, highest: UInt64, unnumbered: UInt64)?
        var text: String?, checked: Bool?, inShoppingList: Bool?, remind: Bool?, due: Int64?, price: String?, clientKey: String?
        var isItem: Bool { items == nil && (text != nil || (name != nil && price != nil)) }
    }

    private func listArray(prefix: String) throws -> [ListInfo] {
        let start = reader.offset
        var lists: [ListInfo] = []
        var itemsOnly: ListInfo?
        try array { index in
            let path = "\(prefix)[\(index)]"
            if var one = itemsOnly {
                let f = try self.fields(.item, path)
                _ = try self.item(f, path)
                one.itemCount += 1
                one.highestItemID = max(one.highestItemID, f.id ?? 0)
                one.unnumbered += f.id == nil ? 1 : 0
                itemsOnly = one
                return
            }
            let f = try self.fields(index == 0 ? .either : .list, path)
            if index == 0 && f.isItem {
                _ = try self.item(f, path)
                itemsOnly = ListInfo(path: prefix.isEmpty ? "the document" : prefix, name: self.nameForItems, itemsOffset: start,
                                     itemsPath: prefix, itemCount: 1, highestItemID: f.id ?? 0,
                                     unnumbered: f.id == nil ? 1 : 0)
                return
            }
            guard let name = f.name else { throw TransferError("JSON: \(path): \"name\" is missing") }
            lists.append(ListInfo(path: path, id: f.id, name: name, icon: f.icon, revision: f.revision, nextItemID: f.nextItemID,
                                  itemsOffset: f.items?.offset, itemsPath: "\(path).items", itemCount: f.items?.count ?? 0,
                                  highestItemID: f.items?.highest ?? 0, unnumbered: f.items?.unnumbered ?? 0))
        }
        return itemsOnly.map { [$0] } ?? lists
    }

    /// The items of a list, first pass: counted and checked.
    private func scanItems(_ path: String) throws -> (offset: UInt64, count: UInt64, highest: UInt64, unnumbered: UInt64) {
        _ = try reader.peekToken()
        let start = reader.offset
        var count: UInt64 = 0, highest: UInt64 = 0, unnumbered: UInt64 = 0
        try array { index in
            let f = try self.fields(.item, "\(path)[\(index)]")
            _ = try self.item(f, "\(path)[\(index)]")
            count += 1
            highest = max(highest, f.id ?? 0)
            unnumbered += f.id == nil ? 1 : 0
        }
        return (start, count, highest, unnumbered)
    }

    private func fields(_ mode: Mode, _ path: String) throws -> Fields {
        var f = Fields()
        let list = mode != .item, item = mode != .list
        try object(path) { key in
            let at = "\(path).\(key)"
            do {
                try self.field(key, at, list: list, item: item, into: &f)
            } catch let error as TransferError where !error.message.contains(path) {
                throw TransferError("JSON: \(at): " + error.message.dropFirst("JSON: ".count))
            }
        }
        return f
    }

    private func field(_ key: String, _ at: String, list: Bool, item: Bool, into f: inout Fields) throws {
        switch key {
        case "id": f.id = try optional(at) { try unsigned(at) }
        case "name": f.name = try optional(at) { try reader.string() }
        case "icon" where list: f.icon = try optional(at) { try reader.string() }
        case "revision" where list: f.revision = try optional(at) { try unsigned(at) }
        case "nextItemID" where list: f.nextItemID = try optional(at) { try unsigned(at) }
        case "items" where list: f.items = try optional(at) { try scanItems(at) }
        case "text" where item: f.text = try optional(at) { try reader.string() }
        case "checked" where item: f.checked = try optional(at) { try bool(at) }
        case "inShoppingList" where item: f.inShoppingList = try optional(at) { try bool(at) }
        case "remind" where item: f.remind = try optional(at) { try bool(at) }
        case "due" where item: f.due = try optional(at) { try signed(at) }
        case "price" where item: f.price = try optional(at) { try reader.number() }
        case "clientKey" where item, "uuid" where item: f.clientKey = try optional(at) { try reader.string() }
        default: try reader.skipValue()
        }
    }

    private func item(_ f: Fields, _ path: String) throws -> Entry {
        guard let text = f.text ?? f.name else { throw TransferError("JSON: \(path): \"text\" is missing") }
        var fields = ItemFields(text: text, checked: f.checked ?? f.inShoppingList ?? false, due: f.due, remind: f.remind ?? false)
        if let price = f.price {
            if f.text != nil {
                guard let cents = Int64(price) else { throw TransferError("JSON: \(path).price: \(price) is not a whole number of cents") }
                fields.price = cents
            } else {
                guard let cents = Price.cents(decimal: price) else { throw TransferError("JSON: \(path).price: \(price) is out of range") }
                fields.price = cents
            }
        }
        return Entry(id: f.id.map { ItemID($0) }, fields: fields, clientKey: f.clientKey)
    }

    private func optional<T>(_ at: String, _ value: () throws -> T) throws -> T? {
        if try reader.peekToken() == UInt8(ascii: "n") {
            _ = try reader.literal()
            return nil
        }
        return try value()
    }

    private func bool(_ at: String) throws -> Bool {
        guard let b = try reader.literal(), let value = b else { throw TransferError("JSON: \(at): expected true or false") }
        return value
    }

    private func unsigned(_ at: String) throws -> UInt64 {
        let text = try reader.number()
        guard let v = UInt64(text) else { throw TransferError("JSON: \(at): \(text) is not a whole number from 0 to 2^64-1") }
        return v
    }

    private func signed(_ at: String) throws -> Int64 {
        let text = try reader.number()
        guard let v = Int64(text) else { throw TransferError("JSON: \(at): \(text) is not a whole number of 64 bits") }
        return v
    }

    /// An object: `body` reads the value of each key.
    private func object(_ path: String, _ body: (String) throws -> Void) throws {
        guard try reader.peekToken() == UInt8(ascii: "{") else { throw TransferError("JSON: \(path): expected an object") }
        _ = try reader.take()
        if try reader.peekToken() == UInt8(ascii: "}") { _ = try reader.take(); return }
        repeat {
            let key = try reader.string()
            try reader.expect(UInt8(ascii: ":"), "':'")
            try body(key)
        } while try reader.separator(close: UInt8(ascii: "}"))
    }

    /// An array: `body` reads element `index`.
    private func array(_ body: (Int) throws -> Void) throws {
        try reader.expect(UInt8(ascii: "["), "an array")
        if try reader.peekToken() == UInt8(ascii: "]") { _ = try reader.take(); return }
        var index = 0
        repeat {
            try body(index)
            index += 1
        } while try reader.separator(close: UInt8(ascii: "]"))
    }
}
