/// The rules for an item's client key (Protocol/SPEC.md section 4): a short
/// string a client chooses for an item, such as the app's own uuid or an id
/// an offline client made up, unique within the item's list.
public enum ClientKey {
    /// The longest key, in UTF-8 bytes. Keys are 1 to 64 bytes.
    public static let maxBytes = 64

    /// Checks a key's length: empty is `BAD_FIELD`, longer than `maxBytes`
    /// is `LIMIT_EXCEEDED`, both naming `field`.
    public static func validate(_ key: String, field: String = "clientKey") throws(ChecklistError) {
        let bytes = key.utf8.count
        guard bytes > 0 else { throw .badField(field, "a client key must not be empty") }
        guard bytes <= maxBytes else {
            throw ChecklistError(.limitExceeded, "client key is \(bytes) bytes, the limit is \(maxBytes)", field: field)
        }
    }

    /// The error for a key another item of the list already has.
    public static func duplicate(_ key: String, heldBy item: ItemID, in list: ListID) -> ChecklistError {
        ChecklistError(.duplicateKey, "client key \"\(key)\" is already item \(item)'s in list \(list)", field: "clientKey")
    }
}
