import ChecklistModel

/// Checks of request values against `Limits` that the store owns. (UTF-8
/// validity is the wire layer's job: Strings arriving here are valid.)
enum Validation {
    /// A name, icon or item text must fit `limits.maxTextBytes` UTF-8 bytes.
    static func text(_ value: String, field: String, limits: Limits) throws(ChecklistError) {
        try textBytes(value.utf8.count, field: field, limits: limits)
    }

    /// The same check for a text of `bytes` UTF-8 bytes.
    static func textBytes(_ bytes: Int, field: String, limits: Limits) throws(ChecklistError) {
        guard bytes <= Int(limits.maxTextBytes) else {
            throw ChecklistError(.limitExceeded, "\(field) is \(bytes) bytes, the limit is \(limits.maxTextBytes)", field: field)
        }
    }

    /// A list name must not be empty and must fit the text limit.
    static func name(_ value: String, limits: Limits) throws(ChecklistError) {
        guard !value.isEmpty else { throw .badField("name", "name must not be empty") }
        try text(value, field: "name", limits: limits)
    }

    /// A page may hold 1 ... `limits.maxPageRows` rows.
    static func pageLimit(_ limit: Int, limits: Limits) throws(ChecklistError) {
        guard limit >= 1 else { throw .badField("limit", "limit must be at least 1") }
        guard limit <= Int(limits.maxPageRows) else {
            throw ChecklistError(.limitExceeded, "limit \(limit) exceeds maxPageRows \(limits.maxPageRows)", field: "limit")
        }
    }

    /// A patch holds 1 ... `limits.maxBatchOps` operations.
    static func batch(_ count: Int, limits: Limits) throws(ChecklistError) {
        guard count >= 1 else { throw .badField("ops", "a patch needs at least one operation") }
        guard count <= Int(limits.maxBatchOps) else {
            throw ChecklistError(.limitExceeded, "\(count) operations exceed maxBatchOps \(limits.maxBatchOps)", field: "ops")
        }
    }
}
