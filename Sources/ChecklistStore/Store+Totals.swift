import ChecklistModel

extension Store {
    /// How many lists and items the store holds, over all namespaces (for
    /// STATS and metrics). One pass over the lists under the store's lock:
    /// O(lists), not O(items), since each list knows its row count.
    public func totals() -> (lists: Int, items: Int) {
        reading { state in
            (state.lists.count, state.lists.values.reduce(0) { $0 + $1.itemCount })
        }
    }
}
