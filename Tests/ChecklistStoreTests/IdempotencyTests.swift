import ChecklistModel
import ChecklistRandom
@testable import ChecklistStore
import Testing

/// Exactly-once patches: the store answers a retried idempotency key with
/// the original result, records keys in the committed `Change` so that a
/// replay rebuilds its memory, and refuses (never re-applies) a key it has
/// forgotten.
@Suite(.timeLimit(.minutes(10))) struct IdempotencyTests {
    static let ns = Namespace("alice")

    static func inserts(_ texts: [String], tempRefs: Bool = true) -> [PatchOperation] {
        texts.enumerated().map { i, text in
            .insert(tempRef: tempRefs ? UInt64(i + 1) : nil, position: .end, fields: ItemFields(text: text))
        }
    }

    @Test func aRetryIsAnsweredWithTheOriginalResultAndAppliedOnce() throws {
        let recorder = ChangeRecorder()
        let store = Store(onCommit: recorder.record)
        let list = try store.createList(in: Self.ns, name: "Groceries", icon: "")
        let key = IdempotencyKey(client: 42, sequence: 1)
        let first = try store.patch(in: Self.ns, list: list.id, baseRevision: nil, ops: Self.inserts(["Milk", "Eggs"]),
                                    idempotencyKey: key)
        #expect(!first.isRepeat && first.revision == 2)
        // Another client's patch in between moves the list on.
        _ = try store.patch(in: Self.ns, list: list.id, baseRevision: nil, ops: Self.inserts(["Bread"]))
        let retry = try store.patch(in: Self.ns, list: list.id, baseRevision: nil, ops: Self.inserts(["Milk", "Eggs"]),
                                    idempotencyKey: key)
        #expect(retry.isRepeat)
        #expect(retry.revision == first.revision)
        #expect(retry.ids == first.ids)
        #expect(retry.summary.revision == 3)
        #expect(try store.summary(in: Self.ns, list: list.id).itemCount == 3)
        // One change per applied patch; the retry is not announced. The key travels in the change.
        #expect(recorder.changes.count == 3)
        #expect(recorder.changes[1].idempotencyKey == key)
        #expect(recorder.changes[2].idempotencyKey == nil)
    }

    @Test func aBaseRevisionRetryIsNotAConflict() throws {
        let store = Store()
        let list = try store.createList(in: Self.ns, name: "To Do", icon: "")
        let key = IdempotencyKey(client: 7, sequence: 9)
        let first = try store.patch(in: Self.ns, list: list.id, baseRevision: 1, ops: Self.inserts(["a"]), idempotencyKey: key)
        let retry = try store.patch(in: Self.ns, list: list.id, baseRevision: 1, ops: Self.inserts(["a"]), idempotencyKey: key)
        #expect(retry.isRepeat && retry.revision == first.revision && retry.ids == first.ids)
    }

    @Test func keysAreScopedToTheNamespaceAndMismatchesAreRefused() throws {
        let store = Store()
        let mine = try store.createList(in: Self.ns, name: "Mine", icon: "")
        let theirs = try store.createList(in: Namespace("bob"), name: "Theirs", icon: "")
        let key = IdempotencyKey(client: 1, sequence: 1)
        _ = try store.patch(in: Self.ns, list: mine.id, baseRevision: nil, ops: Self.inserts(["x"]), idempotencyKey: key)
        // The same key in another namespace is another client's: applied.
        let other = try store.patch(in: Namespace("bob"), list: theirs.id, baseRevision: nil, ops: Self.inserts(["y"]),
                                    idempotencyKey: key)
        #expect(!other.isRepeat)
        // The same key for another list, or another batch shape, is refused.
        let wrongList = #expect(throws: ChecklistError.self) {
            _ = try store.patch(in: Self.ns, list: theirs.id, baseRevision: nil, ops: Self.inserts(["x"]), idempotencyKey: key)
        }
        #expect(wrongList?.code == .badField && wrongList?.field == "sequence")
        let wrongShape = #expect(throws: ChecklistError.self) {
            _ = try store.patch(in: Self.ns, list: mine.id, baseRevision: nil, ops: Self.inserts(["x", "z"]), idempotencyKey: key)
        }
        #expect(wrongShape?.field == "sequence")
        #expect(try store.summary(in: Self.ns, list: mine.id).itemCount == 1)
    }

    @Test func aFailedPatchIsNotRememberedItsRetryRunsAfresh() throws {
        let store = Store()
        let list = try store.createList(in: Self.ns, name: "L", icon: "")
        let key = IdempotencyKey(client: 3, sequence: 1)
        #expect(throws: ChecklistError.self) {
            _ = try store.patch(in: Self.ns, list: list.id, baseRevision: nil, ops: [.delete(.id(ItemID(99)))], idempotencyKey: key)
        }
        let retry = try store.patch(in: Self.ns, list: list.id, baseRevision: nil, ops: Self.inserts(["ok"]), idempotencyKey: key)
        #expect(!retry.isRepeat && retry.revision == 2)
    }

    /// A restart replays the log into a fresh store: the keys come back with
    /// the changes, so a retry after the restart is still answered.
    @Test func replayingTheChangesRebuildsTheMemoryOfKeys() throws {
        let recorder = ChangeRecorder()
        let original = Store(onCommit: recorder.record)
        let list = try original.createList(in: Self.ns, name: "L", icon: "")
        let key = IdempotencyKey(client: 5, sequence: 77)
        let first = try original.patch(in: Self.ns, list: list.id, baseRevision: nil,
                                       ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "no ref")),
                                             .insert(tempRef: 8, position: .index(0), fields: ItemFields(text: "ref 8"))],
                                       idempotencyKey: key)
        let restarted = Store()
        for change in recorder.changes { try restarted.replay(change) }
        let retry = try restarted.patch(in: Self.ns, list: list.id, baseRevision: nil,
                                        ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "no ref")),
                                              .insert(tempRef: 8, position: .index(0), fields: ItemFields(text: "ref 8"))],
                                        idempotencyKey: key)
        #expect(retry.isRepeat && retry.revision == first.revision)
        #expect(retry.ids == first.ids && retry.ids.map(\.tempRef) == [8])
        #expect(try restarted.summary(in: Self.ns, list: list.id).itemCount == 2)
    }

    /// Past its window a client's old keys are refused with RESYNC_REQUIRED,
    /// never applied twice; newer keys are unaffected.
    @Test func aForgottenKeyIsRefusedNotReapplied() throws {
        let store = Store()
        let list = try store.createList(in: Self.ns, name: "L", icon: "")
        let perClient = IdempotencyWindow.Limits.standard.perClient
        for sequence in 1...UInt64(perClient + 10) {
            _ = try store.patch(in: Self.ns, list: list.id, baseRevision: nil, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "x"))],
                                idempotencyKey: IdempotencyKey(client: 9, sequence: sequence))
        }
        let error = #expect(throws: ChecklistError.self) {
            _ = try store.patch(in: Self.ns, list: list.id, baseRevision: nil, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "x"))],
                                idempotencyKey: IdempotencyKey(client: 9, sequence: 3))
        }
        #expect(error?.code == .resyncRequired && error?.field == "sequence")
        let recent = try store.patch(in: Self.ns, list: list.id, baseRevision: nil, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "x"))],
                                     idempotencyKey: IdempotencyKey(client: 9, sequence: UInt64(perClient + 10)))
        #expect(recent.isRepeat)
        #expect(try store.summary(in: Self.ns, list: list.id).itemCount == UInt64(perClient + 10))
    }

    /// The window against a plain model: every key it still answers is
    /// answered right, at most `maxEntries` answers and `maxClients` clients
    /// are kept, and a key of a client it still knows that was applied is
    /// never reported new (only forgetting the whole client loses that).
    @Test(arguments: [1, 2, 3])
    func windowBoundsHoldAgainstAModel(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let limits = IdempotencyWindow.Limits(perClient: 8, maxEntries: 40, maxClients: 12)
        var window = IdempotencyWindow(limits: limits)
        var applied: [IdempotencyWindow.ClientKey: Set<UInt64>] = [:]
        var nextSequence: [UInt64: UInt64] = [:]
        for step in 0..<3000 {
            let client = rng.next() % 20
            let ns = Namespace(rng.next() % 2 == 0 ? "a" : "b")
            let sequence: UInt64
            if rng.next() % 4 == 0, let last = nextSequence[client], last > 1 {
                sequence = 1 + rng.next() % (last - 1)  // a retry of an older key
            } else {
                sequence = (nextSequence[client] ?? 1)
                nextSequence[client] = sequence + 1
            }
            let key = IdempotencyKey(client: client, sequence: sequence)
            let owner = IdempotencyWindow.ClientKey(namespace: ns, client: client)
            // A client forgotten whole (least recently used, past maxClients) loses its keys.
            if !window.remembers(owner) { applied[owner] = nil }
            switch window.lookup(key, in: ns) {
            case .answered(let answer):
                #expect(applied[owner]?.contains(sequence) == true)
                #expect(answer.revision == sequence)
            case .forgotten:
                break
            case .new:
                #expect(applied[owner]?.contains(sequence) != true, "step \(step): a key that was applied is reported new")
                applied[owner, default: []].insert(sequence)
                window.record(Change(namespace: ns, list: ListID(client + 1), revision: sequence, kind: .patched([]),
                                     idempotencyKey: key))
            }
            #expect(window.entryCount <= limits.maxEntries)
            #expect(window.clientCount <= limits.maxClients)
        }
    }
}

/// The memory of keys survives a snapshot: exported from one store and
/// restored into another, it answers the same retries and keeps refusing
/// forgotten keys.
@Suite(.timeLimit(.minutes(10))) struct IdempotencySnapshotTests {
    @Test func theMemoryOfKeysRoundTripsThroughASnapshot() throws {
        let ns = Namespace("alice")
        let store = Store()
        let list = try store.createList(in: ns, name: "L", icon: "")
        let perClient = IdempotencyWindow.Limits.standard.perClient
        var answers: [UInt64: PatchResult] = [:]
        for sequence in 1...UInt64(perClient + 2) {
            answers[sequence] = try store.patch(in: ns, list: list.id, baseRevision: nil,
                                                ops: [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "x"))],
                                                idempotencyKey: IdempotencyKey(client: 4, sequence: sequence))
        }
        let memory = store.idempotencyMemory()
        #expect(memory.answerCount == perClient)
        #expect(memory.clients.count == 1)
        #expect(memory.clients.first?.namespace == ns && memory.clients.first?.client == 4 && memory.clients.first?.floor == 2)
        #expect(memory.clients.first?.answers.first?.sequence == 3)
        #expect(memory.clients.first?.answers.last?.inserted == [ItemIDRun(first: ItemID(UInt64(perClient + 2)), count: 1)])

        let restored = Store()
        _ = try restored.createList(in: ns, name: "L", icon: "")
        restored.restoreIdempotency(memory)
        #expect(restored.idempotencyMemory() == memory)
        let last = UInt64(perClient + 2)
        let retry = try restored.patch(in: ns, list: list.id, baseRevision: nil,
                                       ops: [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "x"))],
                                       idempotencyKey: IdempotencyKey(client: 4, sequence: last))
        #expect(retry.isRepeat && retry.revision == answers[last]?.revision && retry.ids == answers[last]?.ids)
        let forgotten = #expect(throws: ChecklistError.self) {
            _ = try restored.patch(in: ns, list: list.id, baseRevision: nil,
                                   ops: [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "x"))],
                                   idempotencyKey: IdempotencyKey(client: 4, sequence: 1))
        }
        #expect(forgotten?.code == .resyncRequired)
    }
}
