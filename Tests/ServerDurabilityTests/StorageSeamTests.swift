import ChecklistLog
import ChecklistModel
@testable import ChecklistServer
@testable import ChecklistStorage
import ChecklistStore
import ChecklistTesting
import ChecklistWire
import Foundation
import Synchronization
import Testing

/// A second `ServerStorage` plugs into the service through the seam alone:
/// answers wait for its word, and the answer of a commit it fails is never
/// sent.
@Suite(.timeLimit(.minutes(1)))
struct StorageSeamTests {
    /// Commits become durable or fail only when the test says so.
    final class ManualStorage: ServerStorage {
        private let waiters = CommitStates()
        private let position = Atomic<UInt64>(0)
        private let appended = DispatchSemaphore(value: 0)
        let upkeepStarts = Atomic<Int>(0)
        let closes = Atomic<Int>(0)

        func append(_ changes: [Change]) {
            let next = position.add(1, ordering: .sequentiallyConsistent).newValue
            uncommitted.record(changes, at: next)
            appended.signal()
        }

        /// Whether pages read while their changes were in flight still show
        /// what was committed (no rebase meanwhile).
        let readsHold = Atomic<Bool>(true)
        func committedAsRead(_ read: UncommittedRead) -> Bool { readsHold.load(ordering: .relaxed) }

        /// A list cache with rows on first use (PostgreSQL), when a test sets one.
        let cache = Mutex<ListCache?>(nil)
        var listCache: ListCache? { cache.withLock { $0 } }

        /// The keys of patches not yet committed, as PostgreSQL's storage keeps them.
        let uncommitted = UncommittedKeys()
        func uncommittedPosition(ofRetry retry: RetriedPatch) -> UInt64? { uncommitted.position(of: retry) }

        /// Signalled each time a commit is asked about while pending.
        let askedWhilePending = DispatchSemaphore(value: 0)
        /// Rebased answers the test makes up, by position and by key.
        let rebased = Mutex<(byPosition: [UInt64: RebasedAnswer], byKey: [RetriedPatch: RebasedAnswer])>(([:], [:]))

        var answersWaitForDurability: Bool { true }
        var lastPosition: UInt64 { position.load(ordering: .sequentiallyConsistent) }
        func commitState(of position: UInt64) -> CommitState {
            let state = waiters.state(of: position)
            if state == .pending { askedWhilePending.signal() }
            return state
        }
        func rebasedAnswer(in positions: ClosedRange<UInt64>, list: ListID, revision: Revision) -> RebasedAnswer? {
            rebased.withLock { found in
                let byPosition = found.byPosition
                return positions.lazy.compactMap { byPosition[$0] }.first
            }
        }
        func rebasedAnswer(ofRetry retry: RetriedPatch, list: ListID, revision: Revision) -> RebasedAnswer? {
            rebased.withLock { $0.byKey[retry] }
        }
        func notify(waiter: UInt64, at position: UInt64, wake: @escaping @Sendable () -> Void) {
            waiters.wait(waiter: waiter, for: position, wake: wake)
        }
        func cancelNotification(waiter: UInt64) { waiters.cancel(waiter: waiter) }
        func startUpkeep(log: ServerLog) { upkeepStarts.add(1, ordering: .relaxed) }
        var status: DurabilityStatus { DurabilityStatus() }
        func close() throws { closes.add(1, ordering: .relaxed) }

        /// Blocks until a commit was appended; returns its position.
        func waitForAppend() -> UInt64? {
            appended.wait(timeout: .now() + 20) == .success ? lastPosition : nil
        }

        func settle(durable through: UInt64) { waiters.durable(through) }
        /// The failed commits up to `through` were committed on a later try.
        func commitFailed(through: UInt64) {
            waiters.durableIncludingFailed(through)
            uncommitted.settle(through: through)
        }
        func fail(_ positions: ClosedRange<UInt64>) { waiters.failed(positions) }
    }

    static func start(_ storage: ManualStorage, loading: (any ListLoading)? = nil,
                      waitLimit: Duration? = nil) throws -> ChecklistService {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.threads = 1
        configuration.logLevel = .error
        return try ChecklistService(ServiceOptions(configuration: configuration,
                                                   storage: StorageOpener { store, _, _ in
            if let loading {
                let cache = ListCache(store: store, configuration: .init(waitLimit: waitLimit), committed: [:])
                cache.setLoader(loading)
                storage.cache.withLock { $0 = cache }
            }
            return storage
        }))
    }

    /// `start`, then creates list 1 and lets its commit be durable.
    static func startWithAList(_ storage: ManualStorage, loading: (any ListLoading)? = nil,
                               waitLimit: Duration? = nil) throws -> ChecklistService {
        let service = try start(storage, loading: loading, waitLimit: waitLimit)
        _ = try service.store.createList(in: .default, name: "L", icon: "")
        storage.settle(durable: try #require(storage.waitForAppend()))
        return service
    }

    static func insert(_ text: String) -> Request {
        .patch(Patch(list: ListID(1), ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: text))]))
    }

    @Test func anAnswerLeavesOnceItsCommitIsDurable() throws {
        let storage = ManualStorage()
        let service = try Self.start(storage)
        #expect(storage.upkeepStarts.load(ordering: .relaxed) == 1)
        _ = try service.store.createList(in: .default, name: "L", icon: "")
        let created = try #require(storage.waitForAppend())
        storage.settle(durable: created)
        try {
            let socket = try FrameSocket(port: service.server.port)
            try socket.handshake()
            try socket.send(Self.insert("milk"), id: 7)
            let position = try #require(storage.waitForAppend())
            #expect(storage.commitState(of: position) == .pending)
            storage.settle(durable: position)
            let (header, answer) = try socket.receive()
            #expect(header.requestID == 7)
            if case .patchOK(let ok) = answer { #expect(ok.revision == 2) } else { Issue.record("expected PATCH_OK, got \(answer)") }
        }()
        try service.shutdown(timeout: .seconds(5))
        #expect(storage.closes.load(ordering: .relaxed) == 1)
    }

    /// The connections of one loop waiting for their commits are woken
    /// together: each sends what has settled, and one still waiting waits
    /// again, whatever the order of positions and closes.
    @Test func aLoopsWaitingConnectionsEachGetTheirAnswerOnceTheirCommitSettles() throws {
        let storage = ManualStorage()
        let service = try Self.startWithAList(storage)
        try {
            var sockets: [FrameSocket] = []
            var positions: [UInt64] = []
            for i in 0..<4 {
                let socket = try FrameSocket(port: service.server.port)
                try socket.handshake()
                try socket.send(Self.insert("item \(i)"), id: UInt32(10 + i))
                positions.append(try #require(storage.waitForAppend()))
                sockets.append(socket)
            }
            #expect(positions == positions.sorted())
            // Gone while it waits: the others still get theirs.
            sockets[1].close()
            // The first and the third at once; the last waits on.
            storage.settle(durable: positions[2])
            #expect(try sockets[0].receive().header.requestID == 10)
            #expect(try sockets[2].receive().header.requestID == 12)
            #expect(storage.commitState(of: positions[3]) == .pending)
            storage.settle(durable: positions[3])
            #expect(try sockets[3].receive().header.requestID == 13)
        }()
        try service.shutdown(timeout: .seconds(5))
    }

    /// A retry answered from the idempotency memory while the original's
    /// commit is in flight waits for that commit; when the commit was
    /// rebased (PostgreSQL, several nodes), the retry gets the rebased
    /// answer, as the original does, not the one the memory first gave.
    @Test func aRetryOfAPatchInFlightGetsItsRebasedAnswer() throws {
        let storage = ManualStorage()
        let service = try Self.startWithAList(storage)
        try {
            let key = IdempotencyKey(client: 5, sequence: 1)
            let patch = Request.patch(Patch(list: ListID(1), idempotencyKey: key,
                                            ops: [.insert(tempRef: 3, position: .end, fields: ItemFields(text: "milk"))]))
            let socket = try FrameSocket(port: service.server.port)
            try socket.handshake()
            // The patch and its retry in one write: handled in one pass, the
            // retry answered from the memory (revision 2) while the original
            // is pending, which the storage is then asked about.
            var frames = WireWriter()
            var encoder = FrameEncoder(compress: false)
            patch.encode(requestID: 1, into: &frames, encoder: &encoder)
            patch.encode(requestID: 2, into: &frames, encoder: &encoder)
            try socket.send(frames.bytes)
            let position = try #require(storage.waitForAppend())
            #expect(storage.askedWhilePending.wait(timeout: .now() + 20) == .success)
            let rebased = RebasedAnswer.patched(revision: 9, ids: [TempRefAssignment(tempRef: 3, id: ItemID(4))])
            storage.rebased.withLock { $0 = ([position: rebased], [RetriedPatch(namespace: .default, key: key): rebased]) }
            storage.settle(durable: position)
            for id: UInt32 in [1, 2] {
                let (header, answer) = try socket.receive()
                #expect(header.requestID == id)
                guard case .patchOK(let ok) = answer else { Issue.record("expected PATCH_OK, got \(answer)"); continue }
                #expect(ok.revision == 9 && ok.ids == [TempRefAssignment(tempRef: 3, id: ItemID(4))], "answer \(id): \(ok)")
            }
        }()
        try service.shutdown(timeout: .seconds(5))
    }

    /// A retry of a keyed patch whose commit failed (and is kept, to be
    /// tried again) is answered `UNAVAILABLE` too, never the PATCH_OK the
    /// idempotency memory holds for a change no transaction holds; once the
    /// commit went through on a later try, the retry gets the answer it was
    /// committed with.
    @Test func aRetryOfAPatchWhoseCommitFailedIsUnavailableUntilItCommits() throws {
        let storage = ManualStorage()
        let service = try Self.startWithAList(storage)
        try {
            let key = IdempotencyKey(client: 6, sequence: 1)
            let patch = Request.patch(Patch(list: ListID(1), idempotencyKey: key,
                                            ops: [.insert(tempRef: 3, position: .end, fields: ItemFields(text: "milk"))]))
            let socket = try FrameSocket(port: service.server.port)
            try socket.handshake()
            try socket.send(patch, id: 1)
            let position = try #require(storage.waitForAppend())
            storage.fail(position...position)
            #expect(try socket.receiveError().error.code == .unavailable)
            try socket.send(patch, id: 2)
            let (retryID, retryError) = try socket.receiveError()
            #expect(retryID == 2 && retryError.code == .unavailable)
            #expect(retryError.message == AnswerHolder.outcomeUnknown.message)
            // Committed on the next try (a rebase would have corrected the
            // memory under the store's lock before this).
            storage.commitFailed(through: position)
            try socket.send(patch, id: 3)
            let (header, answer) = try socket.receive()
            #expect(header.requestID == 3)
            guard case .patchOK(let ok) = answer else { Issue.record("expected PATCH_OK, got \(answer)"); return }
            #expect(ok.revision == 2 && ok.ids == [TempRefAssignment(tempRef: 3, id: ItemID(1))])
        }()
        try service.shutdown(timeout: .seconds(5))
    }

    /// A PAGE (and a LISTS) that shows changes not committed yet (the
    /// store's revision ahead of the committed one) waits for them; if they
    /// were rewritten meanwhile (rebased onto another node's commit), the
    /// read was not what is committed at its revision and `UNAVAILABLE`
    /// goes in its place.
    @Test func aPageShowingChangesInFlightWaitsForThemAndIsRefusedWhenTheyWereRewritten() throws {
        let storage = ManualStorage()
        let service = try Self.startWithAList(storage)
        let committed = Mutex<[ListID: Revision]>([ListID(1): 1])
        // Asked when a page is read (and only then, here).
        let read = DispatchSemaphore(value: 0)
        service.liveSync.setCommittedRevisions { list, cached in
            defer { read.signal() }
            return committed.withLock { $0[list] } ?? cached
        }
        try {
            let writer = try FrameSocket(port: service.server.port)
            try writer.handshake()
            let reader = try FrameSocket(port: service.server.port)
            try reader.handshake()
            let page = Request.getPage(GetPage(list: ListID(1), limit: 10))
            for (round, holds) in [(2, false), (3, true)] {
                try writer.send(Self.insert("item \(round)"), id: UInt32(round))
                let position = try #require(storage.waitForAppend())
                try reader.send(page, id: UInt32(10 + round))
                try reader.send(.listLists(ListLists()), id: UInt32(20 + round))
                #expect(read.wait(timeout: .now() + 20) == .success)
                #expect(read.wait(timeout: .now() + 20) == .success)
                storage.readsHold.store(holds, ordering: .relaxed)
                committed.withLock { $0[ListID(1)] = Revision(round) }
                storage.settle(durable: position)
                #expect(try writer.receive().header.requestID == UInt32(round))
                let (header, answer) = try reader.receive()
                #expect(header.requestID == UInt32(10 + round))
                if holds {
                    guard case .page(let shown) = answer else { Issue.record("expected PAGE, got \(answer)"); continue }
                    #expect(shown.header.revision == Revision(round) && shown.rows.count == round - 1)
                } else {
                    guard case .error(let refused) = answer else { Issue.record("expected ERROR, got \(answer)"); continue }
                    #expect(refused.error.code == .unavailable && refused.error.message == AnswerHolder.readRewritten.message)
                }
                let (listsHeader, lists) = try reader.receive()
                #expect(listsHeader.requestID == UInt32(20 + round))
                if holds {
                    guard case .lists(let shown) = lists else { Issue.record("expected LISTS, got \(lists)"); continue }
                    #expect(shown.lists.map(\.revision) == [Revision(round)])
                } else {
                    guard case .error(let refused) = lists else { Issue.record("expected ERROR, got \(lists)"); continue }
                    #expect(refused.error.code == .unavailable)
                }
            }
        }()
        try service.shutdown(timeout: .seconds(5))
    }

    /// A live push never overtakes answers held for durability: the
    /// SUBSCRIBED answer (and its catch-up) held behind a PATCH_OK comes
    /// first, then the push of another connection's change.
    @Test func aLivePushWaitsBehindHeldAnswers() throws {
        let storage = ManualStorage()
        let service = try Self.startWithAList(storage)
        // Asked by the SUBSCRIBE while the hub registers it (under the hub's
        // lock, which the later publish takes too): the readiness signal.
        let subscribed = DispatchSemaphore(value: 0)
        service.liveSync.setCommittedRevisions { _, cached in
            subscribed.signal()
            return cached
        }
        try {
            let subscriber = try FrameSocket(port: service.server.port)
            try subscriber.handshake()
            try subscriber.send(Self.insert("mine"), id: 1)
            let mine = try #require(storage.waitForAppend())
            try subscriber.send(.subscribe(Subscribe(entries: [Subscribe.Entry(list: ListID(1), revision: nil)])), id: 2)
            // The SUBSCRIBE was handled (its answer held behind the PATCH_OK).
            #expect(subscribed.wait(timeout: .now() + 20) == .success)
            let other = try FrameSocket(port: service.server.port)
            try other.handshake()
            try other.send(Self.insert("theirs"), id: 3)
            let theirs = try #require(storage.waitForAppend())
            storage.settle(durable: theirs)
            #expect(try other.receive().header.requestID == 3)
            #expect(mine < theirs)
            let order = try (0..<3).map { _ in try subscriber.receive() }
            #expect(order.map(\.header.requestID) == [1, 2, FrameHeader.pushRequestID], "\(order.map(\.message))")
        }()
        try service.shutdown(timeout: .seconds(5))
    }

    /// The held PATCH_OK of a failed commit is never sent: ERROR
    /// UNAVAILABLE (outcome unknown) with its request id goes instead, the
    /// connection stays open, and the frame is the golden vector's.
    @Test func theAnswerOfAFailedCommitIsReplacedByUnavailable() throws {
        let storage = ManualStorage()
        let service = try Self.startWithAList(storage)
        try {
            let socket = try FrameSocket(port: service.server.port)
            try socket.handshake()
            try socket.send(Self.insert("milk"), id: 7)
            let position = try #require(storage.waitForAppend())
            storage.fail(position...position)
            // Later commits becoming durable do not make the failed one so.
            storage.settle(durable: position + 10)
            #expect(storage.commitState(of: position) == .failed)
            // Not a byte of the held PATCH_OK: the error in its place.
            let (requestID, error) = try socket.receiveError()
            #expect(requestID == 7)
            #expect(error.code == .unavailable)
            #expect(error.message == AnswerHolder.outcomeUnknown.message)
            // The connection stays open: the next request is answered.
            try socket.send(.ping(Ping(data: [1, 2])), id: 8)
            #expect(try socket.receive().header.requestID == 8)
            // STATS counts the ERROR sent in the PATCH_OK's place (SPEC.md 6.10).
            let report = service.server.metrics.report()
            #expect(report.errors.first { $0.code == .unavailable }?.count == 1)
            #expect(report.requests.first { $0.type == .patch }?.errors == 1)
        }()
        try service.shutdown(timeout: .seconds(5))
    }

    @Test func whatARestartRecoveredIsDurableAtOnce() throws {
        let directory = try TemporaryDirectory(prefix: "checklist-seam-recovered")
        defer { directory.remove() }
        func open() throws -> (Store, DataDirectoryStorage) {
            try StorageOpener.openStore { store, _ in
                try DataDirectoryStorage(path: directory.path, policy: .always, store: store) { error in
                    Issue.record("the log failed: \(error)")
                }
            }
        }
        let (store, first) = try open()
        _ = try store.createList(in: .default, name: "L", icon: "")
        try first.close()
        let (_, second) = try open()
        defer { try? second.close() }
        #expect(second.lastPosition == 1)
        // A retry answered from memory waits for this: it must not wait for an fsync that never comes.
        #expect(second.commitState(of: second.lastPosition) == .durable)
    }

    /// A failed commit's answer is replaced (by ERROR UNAVAILABLE in the
    /// server), the answers before and after it go as they are, and an
    /// answer still pending stops the release.
    @Test func heldAnswersReplaceAFailedCommitsAnswerAndStopAtAPendingOne() {
        var held = HeldAnswerBytes()
        let answers: [UInt8] = [1, 1, 9, 2, 2, 3, 3, 4, 4]
        var waiting: [HeldAnswer] = [.init(start: 0, end: 2, lsn: 1), .init(start: 3, end: 5, lsn: 2),
                                     .init(start: 5, end: 7, lsn: 3), .init(start: 7, end: 9, lsn: 4)]
        answers.withUnsafeBytes { held.append($0, taking: &waiting) }
        #expect(waiting.isEmpty)
        var sent: [UInt8] = []
        var states: [UInt64: CommitState] = [1: .durable, 2: .failed, 3: .durable]
        var replaced: [Range<Int>] = []
        held.release({ states[$0] ?? .pending }, replace: { replaced.append($0.start..<$0.end); return [0xEE] }) { sent.append(contentsOf: $0) }
        #expect(replaced.map { Array(answers[$0]) } == [[2, 2]])
        #expect(sent == [1, 1, 9, 0xEE, 3, 3])
        #expect(held.count == 2)
        #expect(held.waitingFor == 4)
        // More answers behind those still held: their offsets follow the held bytes.
        var more: [HeldAnswer] = [.init(start: 1, end: 3, lsn: 5)]
        [UInt8]([8, 5, 5]).withUnsafeBytes { held.append($0, taking: &more) }
        #expect(more.isEmpty)
        #expect(held.count == 5)
        #expect(held.waitingFor == 5)
        states[4] = .durable
        held.release({ states[$0] ?? .pending }, replace: { _ in [] }) { sent.append(contentsOf: $0) }
        // The byte between the two answers goes with the next one.
        #expect(sent == [1, 1, 9, 0xEE, 3, 3, 4, 4])
        states[5] = .failed
        held.release({ states[$0] ?? .pending }, replace: { replaced.append($0.start..<$0.end); return [0xEE] }) { sent.append(contentsOf: $0) }
        #expect(replaced.last == 1..<3)
        #expect(sent == [1, 1, 9, 0xEE, 3, 3, 4, 4, 8, 0xEE])
        #expect(held.isEmpty)
    }

    /// The ERROR that replaces a held answer is the golden vector
    /// `error-unavailable-outcome-unknown`, with the answer's request id.
    @Test func theReplacingErrorIsTheGoldenVector() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Protocol/vectors/error-unavailable-outcome-unknown.json")
        let vector = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let hex = try #require(vector["hex"] as? String)
        // A held PATCH_OK answering request id 61 (the vector's): the id kept beside its bytes.
        let replaced = AnswerHolder.unavailable(requestID: 61)
        #expect(replaced.map { String(format: "%02x", $0) }.joined() == hex)
    }

    /// A failed position stays failed when later ones become durable, and
    /// is durable once the storage says it committed it after all.
    @Test func aFailedPositionIsDurableOnceCommittedOnARetry() {
        let waiters = CommitStates()
        waiters.failed(3...5)
        waiters.durable(8)
        #expect(waiters.state(of: 4) == .failed)
        waiters.durableIncludingFailed(4)
        #expect(waiters.state(of: 4) == .durable)
        #expect(waiters.state(of: 5) == .failed)
        waiters.durableIncludingFailed(9)
        #expect(waiters.state(of: 5) == .durable)
    }

    @Test func aFailureWakesTheWaitersHoldingAnAnswerAtOrAfterIt() {
        let waiters = CommitStates()
        let woken = Mutex<[UInt64]>([])
        for id: UInt64 in 1...3 {
            waiters.wait(waiter: id, for: id * 10) { woken.withLock { $0.append(id) } }
        }
        waiters.failed(15...15)
        #expect(woken.withLock { $0.sorted() } == [2, 3])
        #expect(waiters.state(of: 15) == .failed)
        #expect(waiters.state(of: 10) == .pending)
        waiters.durable(10)
        #expect(woken.withLock { $0.sorted() } == [1, 2, 3])
        #expect(waiters.state(of: 10) == .durable)
    }
}
