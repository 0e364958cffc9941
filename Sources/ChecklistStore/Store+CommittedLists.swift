import ChecklistModel

extension Store {
    /// Runs `body` while the store is locked, with a look-up of lists as a
    /// snapshot holds them (`ExportedList`: id, name, icon, counts, revision,
    /// next item id; nil for a list that does not exist in the namespace).
    /// No commit runs meanwhile, so what `body` takes from a queue that the
    /// store's `onCommitGroup` fills is exactly in step with what the look-up
    /// returns: a database committer reads the rows its batch leaves.
    ///
    /// - Parameter body: runs under the store's lock: keep it short and never
    ///   call the store from it (deadlock).
    public func withExportedLists<R>(_ body: (_ exported: (Namespace, ListID) -> ExportedList?) -> R) -> R {
        locked { state in
            body { ns, id in try? state.withList(id, in: ns) { $0.exported } }
        }
    }
}

extension Store {
    /// As `withExportedLists`, each list with the UTF-8 bytes of its item
    /// texts and client keys (what `--quota-bytes` counts beside its name
    /// and icon): nil when its rows are not in memory and were never counted.
    public func withExportedListsAndRowBytes<R>(_ body: (_ exported: (Namespace, ListID) -> (list: ExportedList, rowBytes: Int?)?) -> R) -> R {
        locked { state in
            body { ns, id in try? state.withList(id, in: ns) { ($0.exported, $0.rowBytes) } }
        }
    }
}
