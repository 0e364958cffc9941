import ChecklistModel
@testable import ChecklistServer
@testable import ChecklistStorage
import ChecklistStore
import ChecklistTesting
import ChecklistWire
import Synchronization
import Testing

/// A node of several (PostgreSQL, rows on first use) that would refuse a
/// keyed PATCH whose key it has never seen asks the database first: another
/// node may have answered the key (a retry sent here), and then that answer
/// is owed, not a refusal of this node's.
@Suite(.timeLimit(.minutes(1)))
struct KeyLookUpTests {
    /// Lists are resident; a key look-up finds what `database` holds.
    final class Loading: ListLoading {
        let store = Mutex<Store?>(nil)
        let database = Mutex<[RetriedPatch: IdempotencyMemory.Answer]>([:])
        let lookUps = Atomic<Int>(0)
        /// Whether a key look-up never answers (a database that passes no bytes).
        let hangs = Atomic<Bool>(false)

        func load(_ list: ListID, in ns: Namespace, done: @escaping @Sendable (ChecklistError?) -> Void) { done(nil) }
        func catchUp(_ list: ListID, to revision: Revision, done: @escaping @Sendable (ChecklistError?) -> Void) { done(nil) }
        func readChanges(_ read: StoredChangesRead, done: @escaping @Sendable (StoredChanges) -> Void) { done(.notRetained) }
        func lookUpKey(_ key: RetriedPatch, done: @escaping @Sendable (ChecklistError?) -> Void) {
            lookUps.add(1, ordering: .relaxed)
            if hangs.load(ordering: .relaxed) { return }
            if let answer = database.withLock({ $0[key] }), let store = store.withLock({ $0 }) {
                store.restoreIdempotency(IdempotencyMemory(clients: [
                    IdempotencyMemory.Client(namespace: key.namespace, client: key.key.client, floor: 0, answers: [answer])]))
            }
            done(nil)
        }
    }

    @Test func aRefusedRetryOfAKeyAnsweredElsewhereGetsThatAnswer() throws {
        let storage = StorageSeamTests.ManualStorage()
        let loading = Loading()
        let service = try StorageSeamTests.startWithAList(storage, loading: loading)
        loading.store.withLock { $0 = service.store }
        try {
            let socket = try FrameSocket(port: service.server.port)
            try socket.handshake()
            // Item 1 is added, then deleted through "another node": the
            // database holds the key of that delete, this node does not.
            try socket.send(StorageSeamTests.insert("milk"), id: 1)
            storage.settle(durable: try #require(storage.waitForAppend()))
            #expect(try socket.receive().header.requestID == 1)
            let key = IdempotencyKey(client: 21, sequence: 4)
            let delete = Request.patch(Patch(list: ListID(1), idempotencyKey: key, ops: [.delete(.id(ItemID(1)))]))
            try socket.send(.patch(Patch(list: ListID(1), ops: [.delete(.id(ItemID(1)))])), id: 2)
            let deleted = try #require(storage.waitForAppend())
            storage.settle(durable: deleted)
            #expect(try socket.receive().header.requestID == 2)
            loading.database.withLock {
                $0[RetriedPatch(namespace: .default, key: key)] = IdempotencyMemory.Answer(sequence: 4, list: ListID(1), revision: 3, inserted: [])
            }
            try socket.send(delete, id: 3)
            let (header, answer) = try socket.receive()
            #expect(header.requestID == 3)
            guard case .patchOK(let ok) = answer else { Issue.record("expected PATCH_OK, got \(answer)"); return }
            #expect(ok.revision == 3)
            #expect(loading.lookUps.load(ordering: .relaxed) == 1)

            // A key the database does not hold either: the refusal stands.
            try socket.send(.patch(Patch(list: ListID(1), idempotencyKey: IdempotencyKey(client: 21, sequence: 5),
                                         ops: [.delete(.id(ItemID(1)))])), id: 4)
            let (refusedID, refused) = try socket.receiveError()
            #expect(refusedID == 4 && refused.code == .notFound)
            #expect(loading.lookUps.load(ordering: .relaxed) == 2)
        }()
        try service.shutdown(timeout: .seconds(5))
    }

    /// A request parked for database reads that do not come (a link that
    /// passes no bytes, loaders busy) is answered `UNAVAILABLE` once the
    /// cache's wait limit passed, and the connection goes on.
    @Test func aParkedRequestIsUnavailableOnceItsWaitLimitPassed() throws {
        let storage = StorageSeamTests.ManualStorage()
        let loading = Loading()
        loading.hangs.store(true, ordering: .relaxed)
        let service = try StorageSeamTests.startWithAList(storage, loading: loading, waitLimit: .milliseconds(200))
        loading.store.withLock { $0 = service.store }
        try {
            let socket = try FrameSocket(port: service.server.port, timeout: .seconds(20))
            try socket.handshake()
            // Refused here (no item 9), so its key is looked up: the look-up never answers.
            try socket.send(.patch(Patch(list: ListID(1), idempotencyKey: IdempotencyKey(client: 22, sequence: 1),
                                         ops: [.delete(.id(ItemID(9)))])), id: 1)
            let (requestID, error) = try socket.receiveError()
            #expect(requestID == 1 && error.code == .unavailable, "\(error)")
            try socket.send(.ping(Ping(data: [7])), id: 2)
            #expect(try socket.receive().header.requestID == 2)
        }()
        try service.shutdown(timeout: .seconds(5))
    }
}
