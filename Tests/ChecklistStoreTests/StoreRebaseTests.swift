import ChecklistModel
@testable import ChecklistStore
import Testing

/// `Store.rebase`: a node's pending patches taken back, another node's
/// changes replayed, and the patches applied again as the clients sent
/// them, giving the same list as applying them after the other node's in
/// the first place.
@Suite struct StoreRebaseTests {
    let ns = Namespace("r")

    /// Two stores that start from the same list of three items (revision 2).
    /// `recorder` holds every change `theirs` commits.
    func twoNodes() throws -> (mine: Store, theirs: Store, list: ListID, recorder: ChangeRecorder) {
        let recorder = ChangeRecorder()
        let theirs = Store(onCommit: recorder.record)
        let list = try theirs.createList(in: ns, name: "Shared", icon: "").id
        _ = try theirs.patch(in: ns, list: list, baseRevision: nil, ops: (0..<3).map {
            .insert(tempRef: nil, position: .end, fields: ItemFields(text: "item \($0)"))
        })
        let mine = Store()
        for change in recorder.changes { try mine.replay(change) }
        mine.keepPendingPatches()
        return (mine, theirs, list, recorder)
    }

    @Test func pendingPatchesAreAppliedAgainOnTopOfTheOtherNodes() throws {
        let base = try twoNodes()
        let (mine, theirs, list) = (base.mine, base.theirs, base.list)
        // The other node: toggles item 1, deletes item 3, inserts one item (id 4) at the front.
        let theirOps: [[PatchOperation]] = [[.toggle(.id(ItemID(1)))], [.delete(.id(ItemID(3)))],
                                            [.insert(tempRef: nil, position: .index(0), fields: ItemFields(text: "theirs"))]]
        var foreign: [Change] = []
        for ops in theirOps {
            let result = try theirs.patch(in: ns, list: list, baseRevision: nil, ops: ops)
            foreign.append(Change(namespace: ns, list: list, revision: result.revision, kind: .patched(result.applied)))
        }
        // This node, not committed yet: toggles item 1, inserts after item 2 (id 4 here too),
        // sets item 3's text, and a conditional patch.
        let key = IdempotencyKey(client: 7, sequence: 1)
        let mineOps: [(Revision?, IdempotencyKey?, [PatchOperation])] = [
            (nil, nil, [.toggle(.id(ItemID(1)))]),
            (nil, key, [.insert(tempRef: 5, position: .after(.id(ItemID(2))), fields: ItemFields(text: "mine"))]),
            (nil, nil, [.setText(.id(ItemID(3)), "gone")]),
            (5, nil, [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "conditional"))]),
        ]
        for (base, key, ops) in mineOps {
            _ = try mine.patch(in: ns, list: list, baseRevision: base, ops: ops, idempotencyKey: key)
        }
        #expect(mine.cachedRevision(of: list) == 6)

        var underLock: Rebase?
        let rebase = try #require(try mine.rebase(list, committed: 2, onto: foreign, split: 4) { underLock = $0 })
        #expect(underLock?.patches.map(\.revision) == [3, 4, 5, 6])
        #expect(rebase.patches.map(\.revision) == [3, 4, 5, 6])

        // The toggle flips what the other node left: item 1 is unchecked again.
        guard case .applied(let toggle, let toggled) = rebase.patches[0].outcome else { Issue.record("\(rebase.patches[0])"); return }
        #expect(toggle.revision == 6 && toggled.revision == 6)
        #expect(toggle.kind == .patched([.setChecked(ItemID(1), false)]))
        // The insert gets the next id after the other node's (5, not 4) and the next revision.
        guard case .applied(_, let inserted) = rebase.patches[1].outcome else { Issue.record("\(rebase.patches[1])"); return }
        #expect(inserted.revision == 7)
        #expect(inserted.ids == [TempRefAssignment(tempRef: 5, id: ItemID(5))])
        // Item 3 was deleted by the other node; the conditional patch's base is stale.
        guard case .refused(let missing) = rebase.patches[2].outcome,
              case .refused(let conflict) = rebase.patches[3].outcome else { Issue.record("\(rebase.patches)"); return }
        #expect(missing.code == .notFound)
        #expect(conflict.code == .conflict && conflict.revision == 7)
        // The row after the patches up to the split (old revision 4): revision 7.
        #expect(rebase.exportedAtSplit?.summary.revision == 7)
        #expect(mine.cachedRevision(of: list) == 7)

        // The same as applying the surviving patches after the other node's.
        _ = try theirs.patch(in: ns, list: list, baseRevision: nil, ops: mineOps[0].2)
        _ = try theirs.patch(in: ns, list: list, baseRevision: nil, ops: mineOps[1].2, idempotencyKey: key)
        #expect(StoreContents(mine) == StoreContents(theirs))
        // The key answers the rebased revision.
        let retry = try mine.patch(in: ns, list: list, baseRevision: nil, ops: mineOps[1].2, idempotencyKey: key)
        #expect(retry.isRepeat && retry.revision == 7)
    }

    /// Field changes of different items commute: the other node's are
    /// applied on top, the pending patches keep their operations at new
    /// revisions, and the list (its counts too) is the one the long way
    /// gives; a later rebase that does not commute still takes them back.
    @Test func fieldChangesOfDifferentItemsMoveUpWithoutBeingTakenBack() throws {
        let base = try twoNodes()
        let (mine, theirs, list) = (base.mine, base.theirs, base.list)
        var foreign: [Change] = []
        for ops: [PatchOperation] in [[.toggle(.id(ItemID(3)))], [.setText(.id(ItemID(3)), "theirs")]] {
            let result = try theirs.patch(in: ns, list: list, baseRevision: nil, ops: ops)
            foreign.append(Change(namespace: ns, list: list, revision: result.revision, kind: .patched(result.applied)))
        }
        let key = IdempotencyKey(client: 3, sequence: 1)
        let mineOps: [(IdempotencyKey?, [PatchOperation])] = [
            (nil, [.toggle(.id(ItemID(1)))]), (key, [.setChecked(.id(ItemID(2)), true)]), (nil, [.toggle(.id(ItemID(1)))]),
        ]
        for (key, ops) in mineOps { _ = try mine.patch(in: ns, list: list, baseRevision: nil, ops: ops, idempotencyKey: key) }

        let rebase = try #require(try mine.rebase(list, committed: 2, onto: foreign, split: 4) { _ in })
        #expect(rebase.patches.map(\.revision) == [3, 4, 5])
        let moved = rebase.patches.compactMap { patch -> (Change, PatchResult)? in
            if case .applied(let change, let result) = patch.outcome { (change, result) } else { nil }
        }
        #expect(moved.map(\.0.revision) == [5, 6, 7])
        #expect(moved.map(\.0.kind) == [.patched([.setChecked(ItemID(1), true)]), .patched([.setChecked(ItemID(2), true)]),
                                        .patched([.setChecked(ItemID(1), false)])])
        #expect(moved.map(\.0.idempotencyKey) == [nil, key, nil])
        // Three items, item 3 checked by the other node, then 1 and 2 here, then 1 unchecked.
        #expect(moved.map(\.1.summary.uncheckedCount) == [1, 0, 1])
        #expect(moved.map(\.1.summary.revision) == [5, 6, 7])
        #expect(rebase.exportedAtSplit?.summary.revision == 6 && rebase.exportedAtSplit?.summary.uncheckedCount == 0)
        #expect(mine.cachedRevision(of: list) == 7)
        // The same list as applying the patches after the other node's changes.
        let canonical = Store()
        for change in base.recorder.changes { try canonical.replay(change) }
        for (key, ops) in mineOps { _ = try canonical.patch(in: ns, list: list, baseRevision: nil, ops: ops, idempotencyKey: key) }
        #expect(StoreContents(mine) == StoreContents(canonical))
        let retry = try mine.patch(in: ns, list: list, baseRevision: nil, ops: mineOps[1].1, idempotencyKey: key)
        #expect(retry.isRepeat && retry.revision == 6)

        // The other node then deletes item 2, which a pending patch sets: they
        // do not commute, and the patches moved up are taken back the long way.
        let deleted = try theirs.patch(in: ns, list: list, baseRevision: nil, ops: [.delete(.id(ItemID(2)))])
        let deletion = Change(namespace: ns, list: list, revision: deleted.revision, kind: .patched(deleted.applied))
        let again = try #require(try mine.rebase(list, committed: 4, onto: [deletion], split: 7) { _ in })
        #expect(again.patches.map(\.revision) == [5, 6, 7])
        guard case .refused(let missing) = again.patches[1].outcome else { Issue.record("\(again.patches)"); return }
        #expect(missing.code == .notFound)
        for (_, ops) in [mineOps[0], mineOps[2]] { _ = try theirs.patch(in: ns, list: list, baseRevision: nil, ops: ops) }
        #expect(StoreContents(mine) == StoreContents(theirs))
    }

    /// What takes the short way: field changes of different items, no
    /// conditional patch, no key on both sides, one namespace.
    @Test func onlyFieldChangesOfDifferentItemsCommute() {
        let key = IdempotencyKey(client: 1, sequence: 1)
        func entry(_ applied: [AppliedOperation], base: Revision? = nil, key: IdempotencyKey? = nil) -> PendingPatches.Entry {
            PendingPatches.Entry(revision: 3, ops: [], applied: applied, baseRevision: base, key: key, undo: UndoLog())
        }
        func change(_ ops: [AppliedOperation], key: IdempotencyKey? = nil, in namespace: Namespace? = nil) -> Change {
            Change(namespace: namespace ?? ns, list: ListID(1), revision: 3, kind: .patched(ops), idempotencyKey: key)
        }
        func commute(_ entries: [PendingPatches.Entry], _ foreign: [Change], namespace: Namespace) -> Bool {
            StoreState.commutingOperations(entries, foreign, namespace: namespace) != nil
        }
        let mine = entry([.setChecked(ItemID(1), true), .setText(ItemID(2), "a")], key: key)
        #expect(commute([mine], [change([.setPrice(ItemID(3), 5), .setRemind(ItemID(4), true)])], namespace: ns))
        #expect(!commute([mine], [change([.setDue(ItemID(2), 1)])], namespace: ns))
        #expect(!commute([mine], [change([.delete(ItemID(5))])], namespace: ns))
        #expect(!commute([mine], [change([.setText(ItemID(3), "b")], key: key)], namespace: ns))
        #expect(!commute([mine], [change([.setText(ItemID(3), "b")], in: Namespace("other"))], namespace: ns))
        #expect(!commute([mine], [Change(namespace: ns, list: ListID(1), revision: 3, kind: .listUpdated(name: "n", icon: ""))],
                                    namespace: ns))
        #expect(!commute([entry([.setChecked(ItemID(1), true)], base: 2)], [change([.setText(ItemID(3), "b")])], namespace: ns))
        #expect(!commute([entry([.move(ItemID(1), toIndex: 0)])], [change([.setText(ItemID(3), "b")])], namespace: ns))
    }

    @Test func aKeyTheOtherNodeAppliedIsAnsweredNotAppliedTwice() throws {
        let base = try twoNodes()
        let (mine, theirs, list) = (base.mine, base.theirs, base.list)
        let key = IdempotencyKey(client: 9, sequence: 4)
        let ops: [PatchOperation] = [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "once"))]
        let first = try theirs.patch(in: ns, list: list, baseRevision: nil, ops: ops, idempotencyKey: key)
        let foreign = [Change(namespace: ns, list: list, revision: first.revision, kind: .patched(first.applied), idempotencyKey: key)]
        _ = try mine.patch(in: ns, list: list, baseRevision: nil, ops: ops, idempotencyKey: key)
        let rebase = try #require(try mine.rebase(list, committed: 2, onto: foreign, split: 3) { _ in })
        guard case .repeated(let answer) = rebase.patches[0].outcome else { Issue.record("\(rebase.patches)"); return }
        #expect(answer.revision == first.revision && answer.ids == first.ids)
        #expect(StoreContents(mine) == StoreContents(theirs))
    }

    /// A keyed patch with a `baseRevision` that the other node already
    /// applied (a retry sent there) gets that node's answer, not
    /// `CONFLICT` for a base the other node's own commit of it moved.
    @Test func aKeyedPatchWithABaseTheOtherNodeAppliedGetsItsAnswer() throws {
        let base = try twoNodes()
        let (mine, theirs, list) = (base.mine, base.theirs, base.list)
        let key = IdempotencyKey(client: 9, sequence: 5)
        let ops: [PatchOperation] = [.toggle(.id(ItemID(1)))]
        let first = try theirs.patch(in: ns, list: list, baseRevision: 2, ops: ops, idempotencyKey: key)
        let foreign = [Change(namespace: ns, list: list, revision: first.revision, kind: .patched(first.applied), idempotencyKey: key)]
        _ = try mine.patch(in: ns, list: list, baseRevision: 2, ops: ops, idempotencyKey: key)
        let rebase = try #require(try mine.rebase(list, committed: 2, onto: foreign, split: 3) { _ in })
        guard case .repeated(let answer) = rebase.patches[0].outcome else { Issue.record("\(rebase.patches)"); return }
        #expect(answer.revision == first.revision)
        #expect(StoreContents(mine) == StoreContents(theirs))
    }

    @Test func otherPendingChangesAreNotRebased() throws {
        let base = try twoNodes()
        let (mine, list) = (base.mine, base.list)
        _ = try mine.patch(in: ns, list: list, baseRevision: nil, ops: [.toggle(.id(ItemID(2)))])
        _ = try mine.updateList(in: ns, list: list, name: "Renamed", icon: nil)
        let before = StoreContents(mine)
        #expect(try mine.rebase(list, committed: 2, onto: [], split: 4) { _ in } == nil)
        #expect(StoreContents(mine) == before)
        // Settled patches are no longer rebased either.
        mine.settlePending([(list, 4)])
        #expect(try mine.rebase(list, committed: 4, onto: [], split: 4) { _ in } == nil)
    }

    @Test func reservedListIDsAreTakenInOrderAndOtherBlocksReplay() throws {
        let store = Store()
        store.addListIDs(10..<12)
        #expect(try store.createList(in: ns, name: "a", icon: "").id == ListID(10))
        // Another node's block below and above: both replay.
        try store.replay(Change(namespace: ns, list: ListID(40), revision: 1, kind: .listCreated(name: "x", icon: "")))
        try store.replay(Change(namespace: ns, list: ListID(3), revision: 1, kind: .listCreated(name: "y", icon: "")))
        #expect(try store.createList(in: ns, name: "b", icon: "").id == ListID(11))
        #expect(store.listIDsLeft == 0)
        StoreTests.expectError(.unavailable, field: nil) { _ = try store.createList(in: ns, name: "c", icon: "") }
        store.addListIDs(100..<101)
        #expect(try store.createList(in: ns, name: "c", icon: "").id == ListID(100))
    }
}
