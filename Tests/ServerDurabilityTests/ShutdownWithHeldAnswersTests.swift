import ChecklistModel
@testable import ChecklistServer
@testable import ChecklistStorage
import ChecklistStore
import ChecklistTesting
import ChecklistThreads
import ChecklistWire
import Foundation
import Glibc
import Synchronization
import Testing

/// With `--fsync always` answers wait for the log; a shutdown that starts
/// meanwhile still sends them, and only then the goodbye
/// (Protocol/SPEC.md section 1).
@Suite(.timeLimit(.minutes(1)))
struct ShutdownWithHeldAnswersTests {
    /// Holds the log's fsyncs while closed, and says when one is waiting.
    final class FsyncGate: Sendable {
        private let closed = Atomic<Bool>(false)
        private let entered = DispatchSemaphore(value: 0)
        private let opened = DispatchSemaphore(value: 0)

        func close() { closed.store(true, ordering: .sequentiallyConsistent) }
        func open() { closed.store(false, ordering: .sequentiallyConsistent); opened.signal() }
        /// Blocks until an fsync waits at the closed gate.
        func waitForAnFsync() -> Bool { entered.wait(timeout: .now() + 20) == .success }

        var syncFile: @Sendable (Int32) -> Int32 {
            { [self] fd in
                if closed.load(ordering: .sequentiallyConsistent) {
                    entered.signal()
                    opened.wait()
                }
                return Glibc.fsync(fd) == 0 ? 0 : errno
            }
        }
    }

    @Test func aShutdownSendsTheAnswersWaitingForTheLogBeforeTheGoodbye() throws {
        let directory = try TemporaryDirectory(prefix: "checklist-held-shutdown")
        defer { directory.remove() }
        let gate = FsyncGate()
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.threads = 1  // both connections on one loop: see the witness below
        configuration.logLevel = .error
        let service = try ChecklistService(ServiceOptions(
            configuration: configuration,
            storage: .dataDirectory(directory.path, fsync: .always, syncFile: gate.syncFile)) { error in
                Issue.record("the log failed: \(error)")
            })
        let server = service.server
        let list = try service.store.createList(in: .default, name: "L", icon: "")

        let shutdown = Mutex<NativeThread?>(nil)
        let shutdownFailure = Mutex<(any Error)?>(nil)
        try {
            let writer = try FrameSocket(port: server.port)
            let witness = try FrameSocket(port: server.port)
            try writer.handshake()
            try witness.handshake()
            gate.close()
            try writer.send(.patch(Patch(list: list.id, ops: [.insert(tempRef: nil, position: .end,
                                                                      fields: ItemFields(text: "milk"))])), id: 7)
            // The patch is logged and its answer held: the log waits in fsync.
            #expect(gate.waitForAnFsync())

            shutdown.withLock {
                $0 = NativeThread.spawn(name: "shutdown") {
                    do { try service.shutdown(timeout: .seconds(20)) } catch { shutdownFailure.withLock { $0 = error } }
                }
            }
            // The loop tells all its connections at once: once the witness has
            // its goodbye, the writer's connection has been told too.
            let (goodbyeHeader, goodbye) = try witness.receive()
            #expect(goodbyeHeader.requestID == 0)
            guard case .error(let message) = goodbye, message.error.code == .shuttingDown else {
                gate.open()
                Issue.record("expected the goodbye, got \(goodbye)")
                return
            }
            gate.open()
            // The held answer first, then the goodbye.
            let (answerHeader, answer) = try writer.receive()
            #expect(answerHeader.requestID == 7)
            if case .patchOK(let ok) = answer { #expect(ok.revision == 2) } else { Issue.record("expected PATCH_OK, got \(answer)") }
            let (lastHeader, last) = try writer.receive()
            #expect(lastHeader.requestID == 0)
            if case .error(let message) = last {
                #expect(message.error.code == .shuttingDown)
            } else {
                Issue.record("expected the goodbye, got \(last)")
            }
        }()  // the sockets close here, so the server's lingering closes end
        shutdown.withLock { $0 }?.join()
        // The shutdown closed the storage too: the log flushed and closed.
        #expect(shutdownFailure.withLock { $0 } == nil)
    }
}
