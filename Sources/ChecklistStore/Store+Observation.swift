import ChecklistModel

extension Store {
    /// Runs `body` with list summaries while the store is locked, so that
    /// no change commits (and no `onCommit` runs) until it returns: what
    /// `body` records next to the summaries (a live-sync subscription, the
    /// position in a change feed fed by `onCommit`) is exactly in step with
    /// them.
    ///
    /// - Parameters:
    ///   - lists: lists to look up; `requested[i]` is nil when `lists[i]`
    ///     does not exist in `ns`.
    ///   - includingAll: also pass every list of `ns` (ordered by id) as
    ///     `all`; otherwise `all` is empty.
    ///   - body: runs under the store's lock: keep it short and never call
    ///     the store from it (deadlock).
    public func withSummaries<R, E: Error>(in ns: Namespace, of lists: [ListID], includingAll: Bool,
                                           _ body: (_ requested: [ListSummary?], _ all: [ListSummary]) throws(E) -> R) throws(E) -> R {
        try locked { (state) throws(E) -> R in
            var requested: [ListSummary?] = []
            requested.reserveCapacity(lists.count)
            for list in lists {
                requested.append(try? state.withList(list, in: ns) { $0.summary })
            }
            var all: [ListSummary] = []
            if includingAll {
                for id in state.listIDs[ns] ?? [] {
                    if let summary = try? state.withList(id, in: ns, { $0.summary }) { all.append(summary) }
                }
            }
            return try body(requested, all)
        }
    }
}
