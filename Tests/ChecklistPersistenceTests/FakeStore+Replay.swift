import ChecklistModel
import ChecklistPersistence
import ChecklistSnapshotFixtures

extension FakeStore {
    /// The replay sink a server would use: `ReplayRule`, then apply.
    func replay(_ change: Change) throws {
        switch try ReplayRule.decide(change, currentRevision: lists[change.list]?.revision) {
        case .apply: apply(change); replayed.append(change)
        case .skip: skipped.append(change)
        }
    }
}
