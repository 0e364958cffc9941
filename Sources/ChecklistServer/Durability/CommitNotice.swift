import ChecklistModel

/// The payload of a commit notification (`pg_notify('checklist_commits',
/// ...)`, docs/POSTGRES.md "Several nodes"): the sending node's id, then the
/// lists a batch touched with the revision each has after it (0: deleted),
/// as text: `node list:revision list:revision ...`. A batch touching many
/// lists is cut into several payloads below PostgreSQL's 8000-byte limit.
enum CommitNotice {
    /// At most this many bytes per payload.
    static let maxPayloadBytes = 7900

    /// The payloads announcing `revisions`.
    static func payloads(node: UInt64, _ revisions: [(ListID, Revision?)]) -> [String] {
        var payloads: [String] = []
        var current = String(node)
        var count = 0
        for (list, revision) in revisions {
            let entry = " \(list.rawValue):\(revision ?? 0)"
            if current.utf8.count + entry.utf8.count > maxPayloadBytes {
                payloads.append(current)
                current = String(node)
                count = 0
            }
            current += entry
            count += 1
        }
        if count > 0 { payloads.append(current) }
        return payloads
    }

    /// The sender and its (list, revision) pairs; nil when `payload` is
    /// not a commit notice.
    static func parse(_ payload: String) -> (node: UInt64, lists: [(ListID, Revision)])? {
        let words = payload.split(separator: " ")
        guard let first = words.first, let node = UInt64(first) else { return nil }
        var lists: [(ListID, Revision)] = []
        for word in words.dropFirst() {
            let parts = word.split(separator: ":")
            guard parts.count == 2, let list = UInt64(parts[0]), let revision = UInt64(parts[1]) else { return nil }
            lists.append((ListID(list), revision))
        }
        return (node, lists)
    }
}
