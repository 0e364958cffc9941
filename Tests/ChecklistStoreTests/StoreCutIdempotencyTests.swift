import ChecklistModel
import Foundation
import Synchronization
import Testing
@testable import ChecklistStore

/// A store cut carries the memory of answered idempotency keys of its own
/// instant, and a store restored from the cut's lists and memory, then
/// given the changes made after the cut, answers every retry and applies
/// nothing twice.
@Suite(.timeLimit(.minutes(10))) struct StoreCutIdempotencyTests {
    static let ns = Namespace("alice")

    static func insert(_ text: String, tempRef: UInt64 = 1) -> PatchOperation {
        .insert(tempRef: tempRef, position: .end, fields: ItemFields(text: text))
    }

    /// Copies the cut's lists into a new store, then (unless told not to)
    /// its memory of keys.
    static func restore(_ cut: StoreCut, memory: Bool = true) throws -> Store {
        let store = Store()
        var lists: [(ExportedList, [Item])] = []
        let next = cut.exportLists(in: nil) { list, forEachRow in
            var items: [Item] = []
            forEachRow { items.append($0.item) }
            lists.append((list, items))
        }
        for (list, items) in lists { try store.restoreList(list, rows: items) }
        store.restoreNextListID(next)
        if memory { store.restoreIdempotency(cut.idempotencyMemory) }
        return store
    }

    @Test func theCutKeepsTheMemoryOfItsInstant() throws {
        let store = Store()
        let list = try store.createList(in: Self.ns, name: "L", icon: "")
        for sequence in 1...3 as ClosedRange<UInt64> {
            _ = try store.patch(in: Self.ns, list: list.id, baseRevision: nil, ops: [Self.insert("x\(sequence)")],
                                idempotencyKey: IdempotencyKey(client: 1, sequence: sequence))
        }
        let before = store.idempotencyMemory()
        let (cut, _) = store.cut { () }
        // Later patches, a new client and more of the old one, do not show in the cut.
        _ = try store.patch(in: Self.ns, list: list.id, baseRevision: nil, ops: [Self.insert("y")],
                            idempotencyKey: IdempotencyKey(client: 2, sequence: 1))
        _ = try store.patch(in: Self.ns, list: list.id, baseRevision: nil, ops: [Self.insert("z")],
                            idempotencyKey: IdempotencyKey(client: 1, sequence: 4))
        #expect(cut.idempotencyMemory == before)
        #expect(before.answerCount == 3)
        #expect(before.clients.map(\.client) == [1])
        #expect(before.clients[0].answers.map(\.revision) == [2, 3, 4])
        #expect(before.clients[0].answers.map(\.inserted) == [1, 2, 3].map { [ItemIDRun(first: ItemID($0), count: 1)] })
        let now = store.idempotencyMemory()
        #expect(now.answerCount == 5)
        // Least recently used client first.
        #expect(now.clients.map(\.client) == [2, 1])
    }

    /// Cuts taken while writer threads patch with keys: in every cut, a list
    /// at revision r has exactly the keys of its patches up to r remembered
    /// (the newest `perClient` of them), no more and no fewer: the lists and
    /// the memory are of one instant. Writers pause half way until a cut has seen them there, so
    /// at least one cut falls in the middle of their work.
    @Test func theCutsMemoryIsInStepWithItsListsUnderConcurrentPatches() throws {
        let store = Store()
        let writers = 2
        let rounds: UInt64 = 3000
        let perClient = UInt64(IdempotencyWindow.Limits.standard.perClient)
        var lists: [ListID] = []
        for w in 0..<writers { lists.append(try store.createList(in: Self.ns, name: "W\(w)", icon: "").id) }
        let halfWay = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let finished = Atomic<Int>(0)
        for (w, list) in lists.enumerated() {
            Thread.detachNewThread {
                for sequence in 1...rounds {
                    if sequence == rounds / 2 {
                        halfWay.signal()
                        go.wait()
                    }
                    _ = try? store.patch(in: Self.ns, list: list, baseRevision: nil, ops: [Self.insert("\(w)-\(sequence)")],
                                         idempotencyKey: IdempotencyKey(client: UInt64(w), sequence: sequence))
                }
                finished.add(1, ordering: .releasing)
                done.signal()
            }
        }
        func check() throws -> Bool {
            let (cut, _) = store.cut { () }
            var revisions: [ListID: Revision] = [:]
            cut.exportLists(in: Self.ns) { list, _ in revisions[list.summary.id] = list.summary.revision }
            let memory = cut.idempotencyMemory
            var midway = false
            for (w, list) in lists.enumerated() {
                let remembered = memory.clients.first { $0.client == UInt64(w) }?.answers.map(\.sequence) ?? []
                let revision = try #require(revisions[list])
                // Patch n took the list to revision n + 1; the newest perClient are kept.
                let expected = revision > 1 ? Array(max(1, revision - perClient)...(revision - 1)) : []
                #expect(remembered == expected, "list \(list) at revision \(revision) with \(remembered.count) keys")
                midway = midway || (revision > 1 && revision < rounds + 1)
            }
            return midway
        }
        for _ in 0..<writers { halfWay.wait() }
        #expect(try check(), "a cut while the writers are half way")
        for _ in 0..<writers { go.signal() }
        var cuts = 0
        while finished.load(ordering: .acquiring) < writers {
            _ = try check()
            cuts += 1
        }
        for _ in 0..<writers { done.wait() }
        #expect(try !check())
        #expect(store.idempotencyMemory().answerCount == writers * Int(perClient))
        #expect(cuts > 0)
    }

    /// Restore the cut's memory, then replay the changes committed after the
    /// cut: retries of keys from before and after the cut are both answered
    /// with their original results, and nothing is applied twice.
    @Test func restoreThenReplayRemembersKeysFromBothSidesOfTheCut() throws {
        let recorder = ChangeRecorder()
        let store = Store(onCommit: recorder.record)
        let list = try store.createList(in: Self.ns, name: "L", icon: "")
        let early = IdempotencyKey(client: 5, sequence: 1)
        let late = IdempotencyKey(client: 5, sequence: 2)
        let earlyOps = [Self.insert("Milk"), Self.insert("Eggs", tempRef: 2)]
        let lateOps = [Self.insert("Bread")]
        let earlyAnswer = try store.patch(in: Self.ns, list: list.id, baseRevision: nil, ops: earlyOps, idempotencyKey: early)
        let (cut, changesAtCut) = store.cut { recorder.changes.count }
        let lateAnswer = try store.patch(in: Self.ns, list: list.id, baseRevision: nil, ops: lateOps, idempotencyKey: late)

        let restored = try Self.restore(cut)
        for change in recorder.changes.dropFirst(changesAtCut) { try restored.replay(change) }

        for (key, ops, answer) in [(early, earlyOps, earlyAnswer), (late, lateOps, lateAnswer)] {
            let retry = try restored.patch(in: Self.ns, list: list.id, baseRevision: nil, ops: ops, idempotencyKey: key)
            #expect(retry.isRepeat, "\(key)")
            #expect(retry.revision == answer.revision && retry.ids == answer.ids, "\(key)")
        }
        let summary = try restored.summary(in: Self.ns, list: list.id)
        #expect(summary.revision == 3 && summary.itemCount == 3)
        #expect(restored.idempotencyMemory() == store.idempotencyMemory())
    }

    /// Without the memory (an older snapshot) the same retry is applied
    /// again: what the snapshot's memory prevents.
    @Test func withoutTheMemoryARetryOfAnOldKeyIsAppliedAgain() throws {
        let store = Store()
        let list = try store.createList(in: Self.ns, name: "L", icon: "")
        let key = IdempotencyKey(client: 5, sequence: 1)
        _ = try store.patch(in: Self.ns, list: list.id, baseRevision: nil, ops: [Self.insert("Milk")], idempotencyKey: key)
        let (cut, _) = store.cut { () }
        let restored = try Self.restore(cut)
        let bare = try Self.restore(cut, memory: false)
        let again = try bare.patch(in: Self.ns, list: list.id, baseRevision: nil, ops: [Self.insert("Milk")], idempotencyKey: key)
        #expect(!again.isRepeat)
        #expect(try bare.summary(in: Self.ns, list: list.id).itemCount == 2)
        let answered = try restored.patch(in: Self.ns, list: list.id, baseRevision: nil, ops: [Self.insert("Milk")], idempotencyKey: key)
        #expect(answered.isRepeat)
        #expect(try restored.summary(in: Self.ns, list: list.id).itemCount == 1)
    }

    /// Answers whose inserted ids are not one run, and huge runs, are kept
    /// as runs (never expanded) and answer retries with the right ids.
    @Test func runsRoundTripThroughRestore() throws {
        let ns = Self.ns
        let memory = IdempotencyMemory(clients: [
            IdempotencyMemory.Client(namespace: ns, client: 3, floor: 10, answers: [
                IdempotencyMemory.Answer(sequence: 11, list: ListID(1), revision: 9,
                                         inserted: [ItemIDRun(first: ItemID(7), count: 1), ItemIDRun(first: ItemID(4), count: 2)]),
                IdempotencyMemory.Answer(sequence: 12, list: ListID(1), revision: 10,
                                         inserted: [ItemIDRun(first: ItemID(1), count: 1 << 40)]),
            ]),
        ])
        let store = Store()
        _ = try store.createList(in: ns, name: "L", icon: "")
        store.restoreIdempotency(memory)
        #expect(store.idempotencyMemory() == memory)
        let retry = try store.patch(in: ns, list: ListID(1), baseRevision: nil,
                                    ops: [Self.insert("a", tempRef: 1), Self.insert("b", tempRef: 2), Self.insert("c", tempRef: 3)],
                                    idempotencyKey: IdempotencyKey(client: 3, sequence: 11))
        #expect(retry.isRepeat && retry.revision == 9)
        #expect(retry.ids.map(\.id) == [ItemID(7), ItemID(4), ItemID(5)])
        // Below the floor and not remembered: refused, never applied.
        let error = #expect(throws: ChecklistError.self) {
            _ = try store.patch(in: ns, list: ListID(1), baseRevision: nil, ops: [Self.insert("d")],
                                idempotencyKey: IdempotencyKey(client: 3, sequence: 2))
        }
        #expect(error?.code == .resyncRequired)
    }
}
