import ChecklistModel
import Foundation

// The iOS apps' `Checklists.plist` (docs/DOMAIN.md), the file they save their
// whole model to on every change: a property list, XML
// or binary, of lists `{name, iconName, items}` whose items are
// `{text, checked, dueDate, shouldRemind, itemID}`. The apps number items
// from 0, this service from 1: itemID n is item id n + 1 (when a list's
// itemIDs are all present, non-negative and distinct; otherwise its items
// are numbered 1, 2, ... in order).
//
// Also accepted: a dictionary holding that array under `Checklists` or
// `lists`; an array of items alone (one list, "Checklist"); the shopping
// variant's `name` for the text, `inShoppingList` for the check mark and a
// `price` in currency units (stored in cents).
extension ChecklistDocument {
    /// Reads an apps' property list (XML or binary).
    /// - Throws: `TransferError` naming the list and item that is wrong.
    public init(propertyList data: [UInt8]) throws {
        let root: Any
        do {
            root = try PropertyListSerialization.propertyList(from: Data(data), options: [], format: nil)
        } catch {
            throw TransferError("property list: not a readable property list (\(error.localizedDescription))")
        }
        var array: [Any]
        if let a = root as? [Any] {
            array = a
        } else if let d = root as? [String: Any] {
            if d["$archiver"] != nil {
                throw TransferError("property list: a keyed archive (NSKeyedArchiver) is not supported; save the lists with PropertyListEncoder, as Checklists.plist")
            }
            guard let a = (d["Checklists"] ?? d["checklists"] ?? d["lists"]) as? [Any] else {
                throw TransferError("property list: the root is a dictionary without a \"Checklists\" array")
            }
            array = a
        } else {
            throw TransferError("property list: the root is neither an array of lists nor a dictionary")
        }
        // An array of items alone: one list.
        if let first = array.first as? [String: Any], first["items"] == nil, first["text"] != nil {
            array = [["name": "Checklist", "iconName": "No Icon", "items": array] as [String: Any]]
        }
        var lists: [List] = []
        for (index, element) in array.enumerated() {
            let what = "property list: list \(index + 1)"
            guard let dict = element as? [String: Any] else { throw TransferError("\(what) is not a dictionary") }
            guard let name = dict["name"] as? String else { throw TransferError("\(what): \"name\" is missing or not a string") }
            let icon = dict["iconName"] as? String ?? dict["icon"] as? String ?? "No Icon"
            let rawItems = dict["items"] as? [Any] ?? []
            var entries: [Entry] = []
            var appIDs: [Int] = []
            for (position, rawItem) in rawItems.enumerated() {
                let at = "\(what) (\"\(name)\"), item \(position + 1)"
                guard let item = rawItem as? [String: Any] else { throw TransferError("\(at) is not a dictionary") }
                guard let text = (item["text"] ?? item["name"]) as? String else {
                    throw TransferError("\(at): \"text\" is missing or not a string")
                }
                var fields = ItemFields(text: text)
                fields.checked = try Self.bool(item["checked"] ?? item["inShoppingList"], at, "checked") ?? false
                fields.remind = try Self.bool(item["shouldRemind"], at, "shouldRemind") ?? false
                if let due = item["dueDate"] {
                    if let date = due as? Date {
                        fields.due = Int64(date.timeIntervalSince1970.rounded(.down))
                    } else if let seconds = Self.number(due) {
                        // A Date encoded as a number: seconds since 2001-01-01 (Foundation's reference date).
                        fields.due = Int64((seconds + Date.timeIntervalBetween1970AndReferenceDate).rounded(.down))
                    } else {
                        throw TransferError("\(at): \"dueDate\" is not a date")
                    }
                }
                if let price = item["price"] {
                    guard let units = Self.number(price) else { throw TransferError("\(at): \"price\" is not a number") }
                    fields.price = Int64((units * 100).rounded())
                }
                if let id = item["itemID"].flatMap(Self.number), id >= 0, id == id.rounded(), id < 1e15 { appIDs.append(Int(id)) }
                entries.append(Entry(fields: fields))
            }
            if appIDs.count == entries.count && Set(appIDs).count == appIDs.count {
                for i in entries.indices { entries[i].id = ItemID(UInt64(appIDs[i]) + 1) }
            }
            lists.append(List(name: name, icon: icon, items: entries))
        }
        self.init(lists: lists)
    }

    /// The document as an apps' property list (XML): item id n is written
    /// as itemID n - 1.
    public func propertyList() throws -> [UInt8] {
        let array: [Any] = lists.map { list -> Any in
            let items: [Any] = list.items.enumerated().map { position, entry -> Any in
                var item: [String: Any] = ["text": entry.fields.text, "checked": entry.fields.checked,
                                           "shouldRemind": entry.fields.remind,
                                           "itemID": Int(entry.id.map { $0.rawValue - 1 } ?? UInt64(position))]
                if let due = entry.fields.due { item["dueDate"] = Date(timeIntervalSince1970: TimeInterval(due)) }
                if let price = entry.fields.price { item["price"] = Double(price) / 100 }
                return item
            }
            return ["name": list.name, "iconName": list.icon, "items": items] as [String: Any]
        }
        do {
            return Array(try PropertyListSerialization.data(fromPropertyList: array, format: .xml, options: 0))
        } catch {
            throw TransferError("property list: \(error.localizedDescription)")
        }
    }

    private static func bool(_ value: Any?, _ at: String, _ key: String) throws -> Bool? {
        guard let value else { return nil }
        if let b = value as? Bool { return b }
        if let n = value as? NSNumber { return n.boolValue }
        throw TransferError("\(at): \"\(key)\" is not a boolean")
    }

    private static func number(_ value: Any) -> Double? {
        // A real boolean (<true/>) comes as Bool; an NSNumber 0 or 1 also
        // passes `is Bool`, so ask for the type itself.
        if type(of: value) == Bool.self { return nil }
        if let d = value as? Double { return d }
        if let i = value as? Int { return Double(i) }
        if let n = value as? NSNumber { return n.doubleValue }
        return nil
    }
}
