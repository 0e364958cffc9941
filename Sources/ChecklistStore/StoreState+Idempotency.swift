import ChecklistModel

extension StoreState {
    /// The remembered answer to a retried patch, or nil when `key` is new
    /// (then the patch is applied and the key recorded with its change).
    ///
    /// - Throws: `.resyncRequired` for a key at or below the client's
    ///   forgotten floor (it may or may not have been applied: the client
    ///   must read the list), `.badField("sequence")` for a key that answered
    ///   a patch of another list or with another number of inserts.
    mutating func answerRetry(_ key: IdempotencyKey, list: ListID, ops: ArraySlice<PatchOperation>,
                              in ns: Namespace, summarized: Bool = true) throws(ChecklistError) -> Commit? {
        let answer: IdempotencyWindow.Answer
        switch idempotency.lookup(key, in: ns) {
        case .new:
            return nil
        case .forgotten:
            throw ChecklistError(.resyncRequired,
                                 "the answer to sequence \(key.sequence) of client \(key.client) is no longer remembered; read the list to see whether it was applied",
                                 field: "sequence")
        case .answered(let remembered):
            answer = remembered
        }
        var tempRefs: [UInt64?] = []
        for case .insert(let tempRef, _, _) in ops { tempRefs.append(tempRef) }
        guard answer.list == list, tempRefs.count == answer.inserted.count else {
            throw .badField("sequence", "sequence \(key.sequence) of client \(key.client) already answered a different patch")
        }
        var assignments: [PatchResult.Assignment] = []
        for (i, tempRef) in tempRefs.enumerated() {
            if let tempRef { assignments.append(PatchResult.Assignment(tempRef: tempRef, id: answer.inserted[i])) }
        }
        var summary: ListSummary?
        if summarized {
            summary = ListSummary(id: list, name: "", icon: "", itemCount: 0, uncheckedCount: 0, revision: answer.revision)
            if let index = try? index(of: list, in: ns) { summary = lists.values[index].summary }
        }
        return Commit(change: Change(namespace: ns, list: list, revision: answer.revision, kind: .patched([]), idempotencyKey: key),
                      summary: summary, assignments: assignments, isRepeat: true)
    }
}
