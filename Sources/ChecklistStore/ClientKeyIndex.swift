import ChecklistModel

/// The client keys of one list's items (Protocol/SPEC.md, **ItemFields**
/// bit 4), both ways: key to item for INSERT's uniqueness check and for
/// GET_PAGE by key, item to key for reading rows out.
///
/// Kept apart from the row tree so that only lists whose items have keys
/// pay for them: a list without keys holds two empty dictionaries (no
/// storage). A copy-on-write value, so a page or a cut shares it in O(1).
/// Cost where keys are used: an entry in each dictionary, both sharing the
/// key's String storage; measured at about 215 bytes of resident memory per
/// item with a 36-byte uuid key (200,000 items: 53 bytes per row without
/// keys, 269 with).
struct ClientKeyIndex: Sendable {
    private(set) var itemByKey: [String: ItemID] = [:]
    private(set) var keyByItem: [ItemID: String] = [:]

    /// UTF-8 bytes of all the keys (the quota `--quota-bytes` counts them).
    private(set) var keyBytes = 0

    var isEmpty: Bool { keyByItem.isEmpty }
    var count: Int { keyByItem.count }

    /// The key of `item`, if it has one.
    @inline(__always) func key(of item: ItemID) -> String? {
        keyByItem.isEmpty ? nil : keyByItem[item]
    }

    /// The item whose key is `key`.
    func item(withKey key: String) -> ItemID? { itemByKey[key] }

    /// Gives `item` the key `key` (or none, with nil) and returns the key it
    /// had. The caller checked that no other item holds `key`.
    @discardableResult
    mutating func set(_ key: String?, for item: ItemID) -> String? {
        let old = keyByItem[item]
        if let old {
            itemByKey[old] = nil
            keyBytes -= old.utf8.count
        }
        if let key {
            keyBytes += key.utf8.count
            keyByItem[item] = key
            itemByKey[key] = item
        } else if old != nil {
            keyByItem[item] = nil
        }
        return old
    }

    /// Throws `DUPLICATE_KEY` if another item than `item` holds `key`.
    func checkFree(_ key: String, for item: ItemID, in list: ListID) throws(ChecklistError) {
        if let holder = itemByKey[key], holder != item { throw ClientKey.duplicate(key, heldBy: holder, in: list) }
    }
}
