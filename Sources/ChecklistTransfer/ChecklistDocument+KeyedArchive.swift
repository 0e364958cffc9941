import ChecklistModel

// The Shopping List app's `items.plist`: what
// `NSKeyedArchiver.archiveRootObject(items, toFile:)` writes for `[Item]`,
// `Item: NSObject, NSCoding` encoding `uuid` and `name` (objects), `price`
// (`encodeFloat`) and `inShoppingList` (`encodeBool`). Reading it is
// `init(propertyList:)`.
extension ChecklistDocument {
    /// The class name the app's `NSKeyedUnarchiver` looks up for an item.
    public static let shoppingItemClassName = "Shopping_List.Item"

    /// The document's one list as the Shopping List app's keyed archive:
    ///
    ///     $archiver "NSKeyedArchiver", $version 100000, $top {root: UID 1},
    ///     $objects ["$null", NSArray {NS.objects: [items]}, Item {uuid, name, price, inShoppingList}, ...,
    ///               class dictionaries {$classname, $classes}]
    ///
    /// The check mark is `inShoppingList`, a missing price 0. An item's
    /// `uuid` is its client key, or, without one, a UUID made from the list
    /// and item ids (`generatedUUID`), the same on every export.
    /// - Throws: `TransferError` unless the document holds exactly one list
    ///   (the app keeps one).
    public func keyedArchive() throws -> [UInt8] {
        guard lists.count == 1, let list = lists.first else {
            throw TransferError("keyed archive: the Shopping List app keeps one list, this export holds \(lists.count); choose one with --list")
        }
        var objects: [PropertyListValue] = [.string("$null"), .null]
        let itemClass = UInt64(2 + 3 * list.items.count)
        var refs: [PropertyListValue] = []
        for (position, entry) in list.items.enumerated() {
            let at = UInt64(objects.count)
            refs.append(.uid(at))
            let uuid = entry.clientKey ?? Self.generatedUUID(list: list.id?.rawValue ?? 0, item: entry.id?.rawValue ?? UInt64(position + 1))
            objects.append(.dictionary([
                "$class": .uid(itemClass), "uuid": .uid(at + 1), "name": .uid(at + 2),
                "price": .real(Price.units(cents: entry.fields.price ?? 0)), "inShoppingList": .bool(entry.fields.checked),
            ]))
            objects.append(.string(uuid))
            objects.append(.string(entry.fields.text))
        }
        objects.append(.dictionary(["$classname": .string(Self.shoppingItemClassName),
                                    "$classes": .array([.string(Self.shoppingItemClassName), .string("NSObject")])]))
        objects.append(.dictionary(["$classname": .string("NSArray"), "$classes": .array([.string("NSArray"), .string("NSObject")])]))
        objects[1] = .dictionary(["$class": .uid(itemClass + 1), "NS.objects": .array(refs)])
        let archive = PropertyListValue.dictionary([
            "$archiver": .string("NSKeyedArchiver"), "$version": .integer(100000),
            "$top": .dictionary(["root": .uid(1)]), "$objects": .array(objects),
        ])
        return BinaryPropertyListWriter(singlePrecisionKeys: ["price"]).write(archive)
    }

    /// A version-8 (RFC 9562, custom) UUID holding a list id (its low 60
    /// bits) and an item id (low 62 bits), in upper case as `NSUUID` writes.
    public static func generatedUUID(list: UInt64, item: UInt64) -> String {
        let high = (list & 0xFFFF_FFFF_FFFF) << 16 | 0x8000 | (list >> 48 & 0xFFF)
        let low = 0x8000_0000_0000_0000 | (item & 0x3FFF_FFFF_FFFF_FFFF)
        func hex(_ v: UInt64, _ digits: Int) -> String {
            let s = String(v, radix: 16, uppercase: true)
            return String(repeating: "0", count: max(0, digits - s.count)) + s
        }
        return "\(hex(high >> 32, 8))-\(hex(high >> 16 & 0xFFFF, 4))-\(hex(high & 0xFFFF, 4))-\(hex(low >> 48, 4))-\(hex(low & 0xFFFF_FFFF_FFFF, 12))"
    }
}
