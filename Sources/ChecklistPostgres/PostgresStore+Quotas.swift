import ChecklistModel

extension PostgresStore {
    /// The `QUOTA_EXCEEDED` of a quota check that failed: its message is
    /// `QUOTA <index into namespaces, from 1> <field> <held> <quota>`
    /// (schema version 3, `checklist_quota_exceeded`).
    static func quotaRefusal(_ failure: PostgresError, namespaces: [String]) -> PostgresError {
        var error = PostgresError(.quotaExceeded, failure.message, sqlState: failure.sqlState)
        let all = failure.message.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard let at = all.firstIndex(of: "QUOTA") else { return error }
        let words = Array(all[(at + 1)...])
        guard words.count >= 4, let index = Int(words[0]), namespaces.indices.contains(index - 1) else { return error }
        let field = String(words[1])
        let refusal = ChecklistError(.quotaExceeded,
                                     "the namespace would hold \(words[2]) \(field); its quota is \(words[3])",
                                     field: field)
        error.quota = (Namespace(namespaces[index - 1]), refusal)
        return error
    }
}
