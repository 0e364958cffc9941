import ChecklistModel
import Foundation

// The apps' files (docs/DOMAIN.md, docs/APPS.md):
//
// - `Checklists.plist` of the Checklists app, PropertyListEncoder (binary
//   or XML): lists `{name, iconName, items}` whose items are
//   `{text, checked, dueDate, shouldRemind, itemID}`.
// - The same file of older editions, an NSKeyedArchiver archive with the
//   lists under the top key `Checklists`: Checklist `Name`, `IconName`,
//   `Items`; ChecklistItem `Text`, `Checked`, `DueDate` (NSDate),
//   `ShouldRemind`, `ItemID`.
// - The Shopping List app's `items.plist`, an NSKeyedArchiver archive of
//   `[Item]` under `root` (`uuid`, `name`, `price` as a float, `inShoppingList`),
//   and its bundled `seed.plist`, an array of `{name, price}`.
//
// Keys are read in either spelling (`name`/`Name`, ...). The apps number
// items from 0, this service from 1: itemID n is item id n + 1 (when a
// list's itemIDs are all present, non-negative and distinct; otherwise its
// items are numbered 1, 2, ... in order). The shopping variant's `name` is
// the text, `inShoppingList` the check mark, `price` (currency units) is
// kept in cents (`Price`), `uuid` is the entry's client key.
//
// Also accepted: a dictionary holding the lists under `Checklists` or
// `lists`; an array of items alone (dictionaries with `text`, or `name`
// and `price`, and no `items`) is one list named `nameForItems`.
extension ChecklistDocument {
    /// Reads an apps' property list (XML or binary) or keyed archive.
    /// - Parameter nameForItems: the name of the one list made from a file
    ///   that holds items only (the Shopping List app's files).
    /// - Throws: `TransferError` naming the list and item that is wrong.
    public init(propertyList data: [UInt8], nameForItems: String = "Checklist", limits: PropertyListLimits = .init()) throws {
        let parsed = try PropertyListValue.parse(data, limits: limits)
        var root = parsed
        if case .dictionary(let d) = parsed, d["$archiver"] != nil {
            let archive = try KeyedArchiveReader(parsed, limits: limits)
            let keys = archive.topKeys
            guard let key = ["root", "Checklists", "checklists", "lists"].first(where: keys.contains) ?? (keys.count == 1 ? keys[0] : nil) else {
                throw TransferError("keyed archive: \"$top\" holds \(keys.map { "\"\($0)\"" }.joined(separator: ", ")), not \"root\" or \"Checklists\"")
            }
            root = try archive.decode(topKey: key) ?? .null
        }
        let array: [PropertyListValue]
        switch root {
        case .array(let a):
            array = a
        case .dictionary(let d):
            guard case .array(let a)? = Self.field(d, "Checklists", "checklists", "lists") else {
                throw TransferError("property list: the root is a dictionary without a \"Checklists\" array")
            }
            array = a
        default:
            throw TransferError("property list: the root is \(root.kind), neither an array of lists nor a dictionary")
        }
        if let first = array.first, Self.isItem(first) {
            self.init(lists: [try Self.list(.dictionary(["name": .string(nameForItems), "items": .array(array)]), "property list: list 1")])
        } else {
            self.init(lists: try array.enumerated().map { try Self.list($1, "property list: list \($0 + 1)") })
        }
    }

    /// An item, not a list: `text`, or `name` and `price`, and no `items`.
    private static func isItem(_ value: PropertyListValue) -> Bool {
        guard case .dictionary(let d) = value, field(d, "items", "Items") == nil else { return false }
        return field(d, "text", "Text") != nil || (field(d, "name") != nil && field(d, "price") != nil)
    }

    /// The value under the first of `keys` present (nil values count as absent).
    private static func field(_ d: [String: PropertyListValue], _ keys: String...) -> PropertyListValue? {
        for key in keys { if let v = d[key], v != .null { return v } }
        return nil
    }

    private static func list(_ value: PropertyListValue, _ what: String) throws -> List {
        guard case .dictionary(let dict) = value else { throw TransferError("\(what) is \(value.kind), not a dictionary") }
        guard case .string(let name)? = field(dict, "name", "Name") else { throw TransferError("\(what): \"name\" is missing or not a string") }
        var icon = "No Icon"
        if let i = field(dict, "iconName", "IconName", "icon") {
            guard case .string(let s) = i else { throw TransferError("\(what): \"iconName\" is \(i.kind), not a string") }
            icon = s
        }
        var rawItems: [PropertyListValue] = []
        if let i = field(dict, "items", "Items") {
            guard case .array(let a) = i else { throw TransferError("\(what): \"items\" is \(i.kind), not an array") }
            rawItems = a
        }
        var entries: [Entry] = []
        var appIDs: [Int] = []
        for (position, rawItem) in rawItems.enumerated() {
            let at = "\(what) (\"\(name)\"), item \(position + 1)"
            guard case .dictionary(let item) = rawItem else { throw TransferError("\(at) is \(rawItem.kind), not a dictionary") }
            guard case .string(let text)? = field(item, "text", "Text", "name") else {
                throw TransferError("\(at): \"text\" is missing or not a string")
            }
            var fields = ItemFields(text: text)
            fields.checked = try bool(field(item, "checked", "Checked", "inShoppingList"), at, "checked") ?? false
            fields.remind = try bool(field(item, "shouldRemind", "ShouldRemind"), at, "shouldRemind") ?? false
            if let due = field(item, "dueDate", "DueDate") {
                // A date, or a number: seconds since 2001-01-01 (Foundation's reference date).
                guard let seconds = { if case .date(let t) = due { t } else { due.number } }(), seconds.isFinite,
                      abs(seconds) < 1e15 else { throw TransferError("\(at): \"dueDate\" is \(due.kind), not a date") }
                fields.due = Int64((seconds + Date.timeIntervalBetween1970AndReferenceDate).rounded(.down))
            }
            if let price = field(item, "price") {
                guard let units = price.number, let cents = Price.cents(units: units) else {
                    throw TransferError("\(at): \"price\" is \(price.kind), not a price")
                }
                fields.price = cents
            }
            var key: String?
            if let uuid = field(item, "uuid") {
                guard case .string(let s) = uuid else { throw TransferError("\(at): \"uuid\" is \(uuid.kind), not a string") }
                key = s
            }
            if let id = field(item, "itemID", "ItemID")?.number, id >= 0, id == id.rounded(), id < 1e15 { appIDs.append(Int(id)) }
            entries.append(Entry(fields: fields, clientKey: key))
        }
        if appIDs.count == entries.count && Set(appIDs).count == appIDs.count {
            for i in entries.indices { entries[i].id = ItemID(UInt64(appIDs[i]) + 1) }
        }
        return List(name: name, icon: icon, items: entries)
    }

    private static func bool(_ value: PropertyListValue?, _ at: String, _ key: String) throws -> Bool? {
        switch value {
        case nil: return nil
        case .bool(let b)?: return b
        case .integer(let i)?: return i != 0
        case let other?: throw TransferError("\(at): \"\(key)\" is \(other.kind), not a boolean")
        }
    }

    /// The Checklists app's model, as its PropertyListEncoder writes it
    /// (optional keys only when set; `price` and `uuid` are ours, which the
    /// app ignores).
    private struct AppChecklist: Encodable {
        var name: String
        var items: [AppItem]
        var iconName: String
    }

    private struct AppItem: Encodable {
        var text: String
        var checked: Bool
        var dueDate: Date?
        var shouldRemind: Bool
        var itemID: Int
        var price: Double?
        var uuid: String?
    }

    /// The document as the Checklists app's `Checklists.plist`: what its
    /// `PropertyListEncoder` writes (binary) for `[Checklist]`. Item id n
    /// is written as itemID n - 1.
    public func propertyList() throws -> [UInt8] {
        let lists = lists.map { list in
            AppChecklist(name: list.name, items: list.items.enumerated().map { position, entry in
                AppItem(text: entry.fields.text, checked: entry.fields.checked,
                        dueDate: entry.fields.due.map { Date(timeIntervalSince1970: TimeInterval($0)) },
                        shouldRemind: entry.fields.remind, itemID: Int(entry.id.map { $0.rawValue - 1 } ?? UInt64(position)),
                        price: entry.fields.price.map(Price.units), uuid: entry.clientKey)
            }, iconName: list.icon)
        }
        do {
            let encoder = PropertyListEncoder()
            encoder.outputFormat = .binary
            return Array(try encoder.encode(lists))
        } catch {
            throw TransferError("property list: \(error.localizedDescription)")
        }
    }
}
