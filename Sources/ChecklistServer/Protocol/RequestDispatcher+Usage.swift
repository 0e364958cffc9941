import ChecklistModel
import ChecklistStore
import ChecklistWire

extension RequestDispatcher {
    /// STATS option USAGE: what `namespace` (the asking connection's own)
    /// holds, from the counts its quotas are checked against, and the quotas.
    func usageStatus(of namespace: Namespace) -> StatsReport.UsageStatus {
        let held = store.usage(of: namespace)
        let quotas = store.quotas
        return StatsReport.UsageStatus(lists: UInt64(max(0, held.lists)), items: UInt64(max(0, held.items)),
                                       bytes: UInt64(max(0, held.bytes)), quotaLists: quotas.lists.map { UInt64(max(0, $0)) },
                                       quotaItems: quotas.items.map { UInt64(max(0, $0)) },
                                       quotaBytes: quotas.bytes.map { UInt64(max(0, $0)) })
    }
}
