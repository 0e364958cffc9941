import ChecklistModel

/// How a name or icon is stored. PostgreSQL's `text` cannot hold U+0000,
/// which the model allows (it is valid UTF-8), so a value holding it is kept
/// exactly in a `bytea` column beside the text, and the text column shows it
/// with U+FFFD in place of each NUL for an operator. A value without NUL
/// (every usual one) has NULL in the bytea column.
enum StoredText {
    /// The text column's value and the exact bytes when they are needed.
    static func columns(_ value: String) -> (text: String, exact: [UInt8]?) {
        guard value.utf8.contains(0) else { return (value, nil) }
        return (String(value.map { $0 == "\u{0}" ? "\u{FFFD}" : $0 }), Array(value.utf8))
    }

    /// The value back from its two columns.
    static func value(text: String?, exact: [UInt8]?) throws(PostgresError) -> String {
        if let exact {
            guard let value = String(validating: exact, as: UTF8.self) else {
                throw PostgresError(.corruptData, "a stored name or icon is not valid UTF-8")
            }
            return value
        }
        guard let text else { throw PostgresError(.corruptData, "a name or icon is NULL") }
        return text
    }

    /// A namespace, which is a key: it must not hold NUL (namespaces come
    /// from the operator's token configuration, never from a client).
    static func namespace(_ ns: Namespace) throws(PostgresError) -> String {
        guard !ns.rawValue.utf8.contains(0) else {
            throw PostgresError(.unsupportedValue, "a namespace holding NUL cannot be stored in PostgreSQL")
        }
        return ns.rawValue
    }
}
