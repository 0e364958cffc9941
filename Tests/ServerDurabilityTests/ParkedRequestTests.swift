import ChecklistModel
@testable import ChecklistServer
@testable import ChecklistStorage
import ChecklistStore
import ChecklistTesting
import ChecklistThreads
import ChecklistWire
import Foundation
import Synchronization
import Testing

/// A request that waits for database reads (here: the look-up of a keyed
/// PATCH's key, `ListLoadRequest.keyLookUp`) waits decoded
/// (`ParkedRequest`) while its connection reads nothing: the requests
/// behind it are answered after it, in order; at a shutdown it is dropped
/// unanswered and the goodbye goes at once.
@Suite(.timeLimit(.minutes(1)))
struct ParkedRequestTests {
    /// Lists are resident; a key look-up waits until the test answers it
    /// (the database holds no key).
    final class GatedLoading: ListLoading {
        private let pending = Mutex<[@Sendable (ChecklistError?) -> Void]>([])
        private let asked = DispatchSemaphore(value: 0)

        func load(_ list: ListID, in ns: Namespace, done: @escaping @Sendable (ChecklistError?) -> Void) { done(nil) }
        func catchUp(_ list: ListID, to revision: Revision, done: @escaping @Sendable (ChecklistError?) -> Void) { done(nil) }
        func readChanges(_ read: StoredChangesRead, done: @escaping @Sendable (StoredChanges) -> Void) { done(.notRetained) }
        func lookUpKey(_ key: RetriedPatch, done: @escaping @Sendable (ChecklistError?) -> Void) {
            pending.withLock { $0.append(done) }
            asked.signal()
        }

        /// Blocks until a look-up waits.
        func waitForALookUp() -> Bool { asked.wait(timeout: .now() + 20) == .success }

        /// Answers the waiting look-ups: the key is not in the database.
        func answerLookUps() {
            let waiting = pending.withLock { pending in
                defer { pending = [] }
                return pending
            }
            for done in waiting { done(nil) }
        }
    }

    /// Refused here (there is no item 9), so its key is looked up first.
    static let refusedKeyedPatch = Request.patch(Patch(list: ListID(1), idempotencyKey: IdempotencyKey(client: 30, sequence: 1),
                                                      ops: [.delete(.id(ItemID(9)))]))

    @Test func requestsBehindAParkedOneAreAnsweredAfterIt() throws {
        let storage = StorageSeamTests.ManualStorage()
        let loading = GatedLoading()
        let service = try StorageSeamTests.startWithAList(storage, loading: loading)
        let exchange = Result { () throws in
            let socket = try FrameSocket(port: service.server.port, timeout: .seconds(20))
            try socket.handshake()
            try socket.send(Self.refusedKeyedPatch, id: 1)
            try socket.send(.ping(Ping(data: [2])), id: 2)
            try socket.send(.ping(Ping(data: [3])), id: 3)
            #expect(loading.waitForALookUp())
            loading.answerLookUps()
            // The parked PATCH is resumed (the key is unknown everywhere: the refusal stands), then the pings.
            let (first, error) = try socket.receiveError()
            #expect(first == 1 && error.code == .notFound, "\(error)")
            #expect(try socket.receive().header.requestID == 2)
            #expect(try socket.receive().header.requestID == 3)
        }  // the socket closes here, so the server's lingering close ends
        loading.answerLookUps()
        try service.shutdown(timeout: .seconds(5))  // whether the exchange passed or threw
        try exchange.get()
    }

    @Test func aShutdownDropsAParkedRequestAndSaysGoodbye() throws {
        let storage = StorageSeamTests.ManualStorage()
        let loading = GatedLoading()
        let service = try StorageSeamTests.startWithAList(storage, loading: loading)
        let shutdown = Mutex<NativeThread?>(nil)
        let exchange = Result { () throws in
            let socket = try FrameSocket(port: service.server.port, timeout: .seconds(20))
            try socket.handshake()
            try socket.send(Self.refusedKeyedPatch, id: 1)
            #expect(loading.waitForALookUp())
            shutdown.withLock {
                $0 = NativeThread.spawn(name: "shutdown") { _ = try? service.shutdown(timeout: .seconds(30)) }
            }
            // The goodbye, not the parked request's answer; then the close.
            let (header, goodbye) = try socket.receive()
            #expect(header.requestID == 0)
            guard case .error(let message) = goodbye else { Issue.record("expected the goodbye, got \(goodbye)"); return }
            #expect(message.error.code == .shuttingDown)
            #expect(throws: (any Error).self) { _ = try socket.receive() }
        }
        if let thread = shutdown.withLock({ $0 }) {
            // The connection did not wait for the look-up: the shutdown ends before it is answered.
            thread.join()
            loading.answerLookUps()
        } else {
            loading.answerLookUps()
            try service.shutdown(timeout: .seconds(5))
        }
        try exchange.get()
    }
}
