import ChecklistModel
import ChecklistPersistence
import ChecklistSnapshotFixtures

/// Recovers `dir` into a fresh FakeStore, returning the replayed changes.
func recover(_ dir: TempDirectory) throws -> (changes: [Change], report: RecoveryReport) {
    let data = try DataDirectory(path: dir.path)
    defer { data.close() }
    var changes: [Change] = []
    let report = try Recovery.run(directory: data, sink: FakeStore()) { changes.append($0) }
    return (changes, report)
}
