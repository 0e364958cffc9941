import ChecklistModel
import ChecklistRandom
@testable import ChecklistStore
import Testing

/// A batch that fails part way leaves no trace: the rows, their order, the
/// counts, the revision and the item id counter are as before, and nothing
/// is committed. Lists here are several levels deep (tiny node capacities),
/// so the undone prefixes split and merge nodes.
@Suite(.timeLimit(.minutes(10))) struct StoreRollbackTests {
    static let limits = Limits(maxFrameBytes: 1 << 20, maxPageRows: 1000, maxTextBytes: 30, maxBatchOps: 60)

    @Test("failing batches are rolled back exactly", arguments: [UInt64(1), 2, 3])
    func failingBatches(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let recorder = ChangeRecorder()
        let store = Store(limits: Self.limits, treeShape: RowTreeShape(leafCapacity: 4, innerCapacity: 4), onCommit: recorder.record)
        var reference = ReferenceStore(limits: Self.limits)
        let ns = Namespace("r")
        let list = try store.createList(in: ns, name: "Big", icon: "")
        _ = try reference.createList(ns, name: "Big", icon: "")

        var rolledBack = 0
        for round in 0..<250 {
            var generator = ValidBatches(reference.lists[list.id]!)
            // Grow to ~150 rows first, then hover around that size.
            let prefix = generator.batch(Int.random(in: 0...30, using: &rng), minRows: round < 20 ? 1_000 : 100, maxRows: 200, &rng)
            let (failing, code, field) = generator.failingOperation(&rng)
            let suffix = generator.batch(Int.random(in: 0...5, using: &rng), &rng)
            let ops = prefix + [failing] + suffix

            let before = StoreContents(store)
            let committed = recorder.changes.count
            StoreTests.expectError(code, field: field) {
                _ = try store.patch(in: ns, list: list.id, baseRevision: nil, ops: ops)
            }
            #expect(StoreContents(store) == before, "round \(round): \(ops)")
            #expect(StoreContents(store) == StoreContents(reference))
            #expect(recorder.changes.count == committed)
            rolledBack += 1

            // Then a valid batch moves the list on, on both sides.
            var valid = ValidBatches(reference.lists[list.id]!)
            let next = valid.batch(Int.random(in: 1...40, using: &rng), minRows: round < 20 ? 1_000 : 100, maxRows: 200, &rng)
            let got = try store.patch(in: ns, list: list.id, baseRevision: nil, ops: next)
            let expected = try reference.patch(ns, list.id, base: nil, ops: next)
            #expect(got == expected)
        }
        #expect(rolledBack == 250)
        #expect(try store.summary(in: ns, list: list.id).itemCount > 60)
    }

    @Test("a replayed change that does not fit is refused whole")
    func replayRollback() throws {
        let store = Store(limits: .default, treeShape: RowTreeShape(leafCapacity: 4, innerCapacity: 4), onCommit: { _ in })
        let list = try store.createList(in: .default, name: "L", icon: "")
        _ = try store.patch(in: .default, list: list.id, baseRevision: nil, ops: (0..<40).map {
            .insert(tempRef: nil, position: .end, fields: ItemFields(text: "\($0)"))
        })
        let before = StoreContents(store)
        let bad = Change(namespace: .default, list: list.id, revision: 3, kind: .patched([
            .delete(ItemID(5)), .move(ItemID(6), toIndex: 0), .insert(id: ItemID(41), index: 3, fields: ItemFields(text: "new")),
            .setChecked(ItemID(7), true), .delete(ItemID(5)),  // deleted already: fails
        ]))
        #expect(throws: ChecklistError.self) { try store.replay(bad) }
        #expect(StoreContents(store) == before)
        let reused = Change(namespace: .default, list: list.id, revision: 3, kind: .patched([
            .insert(id: ItemID(40), index: 0, fields: ItemFields(text: "id 40 was given out already")),
        ]))
        StoreTests.expectError(.badField, field: "id") { try store.replay(reused) }
        #expect(StoreContents(store) == before)
    }
}
