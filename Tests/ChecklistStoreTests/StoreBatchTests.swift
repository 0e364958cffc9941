import ChecklistModel
import Synchronization
import Testing
@testable import ChecklistStore

/// `Store.patch(in:batch:into:)` applies each patch as one `patch` call after
/// the other would: the same results, revisions, rows and committed changes,
/// the batch's commits handed over in one `onCommitEach` call.
@Suite(.timeLimit(.minutes(2))) struct StoreBatchTests {
    /// What a store's callbacks were given: each call's changes.
    final class Calls: Sendable {
        let groups = Mutex<[[Change]]>([])
        let eaches = Mutex<[[Change]]>([])
    }

    /// A store whose callbacks record their calls in `calls`.
    static func store(_ calls: Calls) -> Store {
        Store(onCommitGroup: { changes in calls.groups.withLock { $0.append(changes) } },
              onCommitEach: { changes in calls.eaches.withLock { $0.append(changes) } })
    }

    static func requests(list: ListID) -> [PatchRequest] {
        func insert(_ text: String, tempRef: UInt64? = nil) -> PatchOperation {
            .insert(tempRef: tempRef, position: .end, fields: ItemFields(text: text))
        }
        let key = IdempotencyKey(client: 3, sequence: 1)
        return [
            PatchRequest(list: list, baseRevision: nil, ops: [insert("a", tempRef: 1), .toggle(.temp(1))], idempotencyKey: key),
            PatchRequest(list: list, baseRevision: nil, ops: [insert("b")]),
            PatchRequest(list: list, baseRevision: nil, ops: [insert("c"), .delete(.id(ItemID(42)))]),  // refused whole
            PatchRequest(list: list, baseRevision: nil, ops: [insert("a", tempRef: 1), .toggle(.temp(1))], idempotencyKey: key),
            PatchRequest(list: list, baseRevision: 3, ops: [insert("d")]),
            PatchRequest(list: list, baseRevision: 2, ops: [insert("stale")]),  // refused: conflict
            PatchRequest(list: ListID(999), baseRevision: nil, ops: [insert("nowhere")]),  // refused: no such list
            PatchRequest(list: list, baseRevision: nil, ops: [.move(.id(ItemID(1)), toIndex: 2)]),
        ]
    }

    @Test func aBatchIsThePatchesOneAfterTheOther() throws {
        let batchCalls = Calls(), aloneCalls = Calls()
        let batched = Self.store(batchCalls), alone = Self.store(aloneCalls)
        let list = try batched.createList(in: .default, name: "L", icon: "").id
        #expect(try alone.createList(in: .default, name: "L", icon: "").id == list)

        var results: [Result<PatchAnswer, ChecklistError>] = [.failure(ChecklistError(.internalError, "left over"))]
        batched.patch(in: .default, batch: Self.requests(list: list), into: &results)
        let one: [Result<PatchAnswer, ChecklistError>] = Self.requests(list: list).map { request in
            Result { () throws(ChecklistError) in
                try alone.patch(in: .default, list: request.list, baseRevision: request.baseRevision, ops: Array(request.ops),
                                idempotencyKey: request.idempotencyKey).answer
            }
        }
        #expect(results == one)
        #expect(results.map { (try? $0.get())?.revision } == [2, 3, nil, 2, 4, nil, nil, 5])
        #expect(results.map { (try? $0.get())?.isRepeat } == [false, false, nil, true, false, nil, nil, false])

        let page = { (store: Store) in try store.page(in: .default, list: list, start: .offset(0), limit: 50, filter: .all) }
        #expect(try page(batched) == page(alone))
        // The four applied patches' changes: one call for the batch, one a patch alone.
        let each = batchCalls.eaches.withLock { $0 }
        #expect(each.count == 1)
        let aloneChanges = aloneCalls.groups.withLock { $0 }.dropFirst()  // after the creation
        #expect(aloneChanges.allSatisfy { $0.count == 1 })
        #expect(each.first == aloneChanges.flatMap { $0 })
        #expect(each.first?.map(\.revision) == [2, 3, 4, 5])
    }

    @Test func aStoreRefusingChangesRefusesTheWholeBatch() throws {
        let store = Store()
        let list = try store.createList(in: .default, name: "L", icon: "").id
        let refusal = ChecklistError(.unavailable, "the database is unreachable")
        store.refuseChanges(refusal)
        var results: [Result<PatchAnswer, ChecklistError>] = []
        store.patch(in: .default, batch: Self.requests(list: list), into: &results)
        #expect(results.count == Self.requests(list: list).count)
        #expect(results.allSatisfy { $0 == .failure(refusal) })
        #expect(try store.summary(in: .default, list: list).revision == 1)
    }

    /// `patch(batches:into:)`, several connections' batches of several
    /// namespaces: each batch as `patch(in:batch:into:)` would apply it
    /// after the batches before it, the results in order, every commit in
    /// one `onCommitEach` call.
    @Test func batchesOfSeveralNamespacesAreTheBatchesOneAfterTheOther() throws {
        let groupCalls = Calls(), aloneCalls = Calls()
        let grouped = Self.store(groupCalls), alone = Self.store(aloneCalls)
        let other = Namespace("other")
        var lists: [Namespace: ListID] = [:]
        for ns in [Namespace.default, other] {
            lists[ns] = try grouped.createList(in: ns, name: "L", icon: "").id
            #expect(try alone.createList(in: ns, name: "L", icon: "").id == lists[ns])
        }
        let batches = [PatchBatch(namespace: .default, requests: Self.requests(list: lists[.default]!)),
                       PatchBatch(namespace: other, requests: Self.requests(list: lists[other]!)),
                       // Another connection of the first namespace: its retry is answered as a repeat.
                       PatchBatch(namespace: .default, requests: Array(Self.requests(list: lists[.default]!).prefix(1)))]
        var results: [Result<PatchAnswer, ChecklistError>] = [.failure(ChecklistError(.internalError, "left over"))]
        grouped.patch(batches: batches, into: &results)
        var one: [Result<PatchAnswer, ChecklistError>] = []
        for batch in batches {
            var some: [Result<PatchAnswer, ChecklistError>] = []
            alone.patch(in: batch.namespace, batch: batch.requests, into: &some)
            one += some
        }
        #expect(results == one)
        #expect(results.count == 2 * Self.requests(list: lists[.default]!).count + 1)
        #expect((try? results.last?.get())?.isRepeat == true)
        for ns in [Namespace.default, other] {
            let page = { (store: Store) in
                try store.page(in: ns, list: lists[ns]!, start: .offset(0), limit: 50, filter: .all)
            }
            #expect(try page(grouped) == page(alone))
        }
        // One call for the three batches, with the changes of the three calls alone.
        let each = groupCalls.eaches.withLock { $0 }
        #expect(each.count == 1)
        #expect(each.first == aloneCalls.eaches.withLock { $0 }.flatMap { $0 })
        #expect(each.first?.count == results.filter { (try? $0.get()).map { !$0.isRepeat } ?? false }.count)
    }
}
