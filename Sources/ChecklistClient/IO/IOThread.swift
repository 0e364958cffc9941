#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ChecklistIO
import ChecklistSocket
import ChecklistThreads
import Synchronization

/// The one thread that reads and writes every connection of the process,
/// TLS or not, woken by ChecklistIO's readiness layer (`Readiness`: epoll on
/// Linux, `poll(2)` on Apple platforms; the same layer as the server's loops). Callers never touch a socket: a request
/// is queued on its connection (`ConnectionCore.state.output`, bounded) and
/// this thread writes it when the socket takes bytes, so no caller waits on
/// a slow peer, and a stalled peer fills only its own connection's queue.
///
/// With a thread per connection, every answer wakes that connection's
/// thread before it wakes the task that waits for it; here one wait returns
/// every connection with bytes waiting, and each gets one read and its
/// frames dispatched (`ConnectionCore.dispatchFrames`): the answers of many
/// connections cost one wake-up.
///
/// A round: wait (or only look, when work is queued); read and write the
/// ready sockets; run the jobs of tasks that prefer this thread as their
/// executor (`IOThread+Executor`); then take the inbox: new connections,
/// connections with frames to write, connections to close. A failure of
/// the wait itself (not `EINTR`) ends the thread: every connection it
/// served is closed with `ClientError.ioFailed`, and the next connection
/// starts a new thread. The host process goes on.
///
/// Each connection's buffers (`ConnectionIO`) are touched only by this
/// thread. Handlers called from here (raw answers, pushes) must not block.
final class IOThread: Sendable {
    /// The thread's name, under the 15 bytes Linux keeps.
    static let threadName = "checklist-io"

    /// The process's I/O thread, started on first use, replaced once it failed.
    private static let current = Mutex<IOThread?>(nil)

    /// The process's I/O thread, started if there is none (or the last one
    /// failed). Starting one waits for nothing but `pthread_create`.
    static func shared() throws(ClientError) -> IOThread {
        try current.withLock { (current) throws(ClientError) -> IOThread in
            if let thread = current, !thread.hasFailed { return thread }
            let thread = try IOThread.start(ReadinessKind.configured)
            current = thread
            return thread
        }
    }

    /// The jobs, connections and requests other threads hand to this one,
    /// and whether the thread was already woken for them.
    struct Inbox {
        var jobs: [UnownedJob] = []
        var added: [ConnectionCore] = []
        var flush: [ConnectionCore] = []
        var closing: [ConnectionCore] = []
        var wakeSignalled = false
        /// Set when the thread ended on a failure: later arrivals are closed at once.
        var failure: ClientError?

        var isEmpty: Bool { jobs.isEmpty && added.isEmpty && flush.isEmpty && closing.isEmpty }
    }

    /// Which readiness implementation the thread runs on.
    let kind: ReadinessKind
    let waker: ReadinessWaker
    let inbox = Mutex(Inbox())
    private let tokens = Atomic<UInt64>(1)
    /// The thread's `pthread_t` once it runs (0 before): work handed over
    /// on the thread itself needs no wake-up.
    let threadID = Atomic<UInt>(0)
    /// True once the thread ended on a failure.
    private let failed = Atomic<Bool>(false)

    var hasFailed: Bool { failed.load(ordering: .acquiring) }

    private init(kind: ReadinessKind, waker: ReadinessWaker) {
        self.kind = kind
        self.waker = waker
    }

    /// Starts a thread named `name` on `kind`'s readiness layer.
    static func start(_ kind: ReadinessKind, name: String = threadName) throws(ClientError) -> IOThread {
        switch kind {
        case .epoll:
            #if os(Linux)
            return try start(EpollReadiness.self, kind: kind, name: name)
            #else
            throw ClientError(.ioFailed, "epoll is not available on this platform")
            #endif
        case .poll:
            return try start(PollReadiness.self, kind: kind, name: name)
        }
    }

    /// Events one wait of the client's thread reports at most.
    static let eventCapacity = 128

    /// Starts a thread on a readiness layer of type `R` (tests pass their own).
    static func start<R: Readiness>(_ type: R.Type, kind: ReadinessKind,
                                    name: String = threadName) throws(ClientError) -> IOThread {
        let readiness: R
        do throws(SocketError) {
            readiness = try R(capacity: eventCapacity)
        } catch {
            throw ClientError(.ioFailed, "cannot set up the client's readiness layer: \(error)")
        }
        let thread = IOThread(kind: kind, waker: readiness.waker)
        // Handed to the new thread, the only one that uses it from now on:
        // this thread does not touch `readiness` after `start` (and closes
        // it only when the thread could not be started).
        nonisolated(unsafe) let handed = readiness
        do throws(ThreadStartError) {
            try NativeThread.start(name: name, blockedSignals: []) {
                thread.run(handed)
            }.detach()
        } catch {
            readiness.close()
            throw ClientError(.ioFailed, error.description)
        }
        return thread
    }

    /// A fresh key for a connection of this thread.
    func nextToken() -> UInt64 {
        tokens.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// True on the I/O thread itself.
    var isCurrent: Bool {
        threadID.load(ordering: .acquiring) == Self.currentThreadKey()
    }

    // MARK: Handing work over

    /// Starts reading and writing `core`'s socket.
    func add(_ core: ConnectionCore) {
        hand(core, isNew: true) { $0.added.append(core) }
    }

    /// Asks the thread to write `core`'s queued frames.
    func requestFlush(_ core: ConnectionCore) {
        hand(core, isNew: false) { $0.flush.append(core) }
    }

    /// Asks the thread to close `core`'s socket.
    func requestClose(_ core: ConnectionCore) {
        hand(core, isNew: false) { $0.closing.append(core) }
    }

    /// Puts work in the inbox and wakes the thread if it may be waiting.
    /// Once the thread has failed, a new connection is closed here with
    /// the failure (the others were closed by the thread as it ended).
    private func hand(_ core: ConnectionCore, isNew: Bool, _ put: (inout Inbox) -> Void) {
        let onThread = isCurrent
        let (signal, failure) = inbox.withLock { inbox -> (Bool, ClientError?) in
            if let failure = inbox.failure { return (false, failure) }
            put(&inbox)
            if onThread || inbox.wakeSignalled { return (false, nil) }
            inbox.wakeSignalled = true
            return (true, nil)
        }
        if let failure {
            if isNew {
                // Never taken by the thread: this one is its only user.
                core.handed.stream.close(notify: false)
                core.finishReading(failure)
            }
            return
        }
        if signal { waker.wake() }
    }

    /// A number that tells threads apart: `pthread_self()` as an integer.
    static func currentThreadKey() -> UInt {
        #if os(Linux)
        return UInt(pthread_self())
        #else
        return UInt(bitPattern: pthread_self())
        #endif
    }

    // MARK: The thread

    /// The thread's body: rounds until the readiness layer fails.
    private func run<R: Readiness>(_ readiness: R) {
        threadID.store(Self.currentThreadKey(), ordering: .releasing)
        var connections: [UInt64: ConnectionIO<R>] = [:]
        var taken = Inbox()
        var running: [UnownedJob] = []
        var workLeft = false
        while true {
            do throws(SocketError) {
                try readiness.wait(timeout: workLeft ? .zero : nil) { event in
                    guard let connection = connections[event.token] else { return }
                    if event.isReadable { connection.readable() }
                    if event.isWritable && !connection.isEnded { connection.flush() }
                    if connection.isEnded { connections[event.token] = nil }
                }
            } catch {
                fail(ClientError(.ioFailed, error.description), connections: connections, readiness: readiness)
                return
            }
            // Jobs first (their requests join this round's flush), then the rest.
            inbox.withLock { inbox in
                swap(&inbox.jobs, &running)
                inbox.wakeSignalled = false
            }
            runJobs(&running)
            inbox.withLock { inbox in
                swap(&inbox.added, &taken.added)
                swap(&inbox.flush, &taken.flush)
                swap(&inbox.closing, &taken.closing)
            }
            for core in taken.added {
                let connection = ConnectionIO(core, readiness: readiness)
                if connection.register() { connections[core.ioToken] = connection }
            }
            for core in taken.flush {
                guard let connection = connections[core.ioToken] else { continue }
                connection.flush()
                if connection.isEnded { connections[core.ioToken] = nil }
            }
            for core in taken.closing {
                guard let connection = connections[core.ioToken] else { continue }
                connection.end(core.closeReason ?? ClientError(.connectionClosed, "the connection was closed by the client"),
                               byClient: true)
                connections[core.ioToken] = nil
            }
            taken.added.removeAll(keepingCapacity: true)
            taken.flush.removeAll(keepingCapacity: true)
            taken.closing.removeAll(keepingCapacity: true)
            workLeft = inbox.withLock { !$0.isEmpty }
        }
    }

    /// The readiness layer failed: no connection can be served. Each is
    /// closed with `ClientError.ioFailed`; then work handed over later is
    /// refused (a new connection is closed at once, a job goes to the
    /// global executor) and the next connection starts a new thread.
    private func fail<R: Readiness>(_ error: ClientError, connections: [UInt64: ConnectionIO<R>], readiness: R) {
        let reason = ClientError(.ioFailed, "the client's I/O thread stopped: \(error.message)")
        failed.store(true, ordering: .releasing)
        for (_, connection) in connections { connection.end(reason, byClient: false) }
        // What arrived meanwhile: connections never watched are closed here;
        // flush and close requests were for connections ended above.
        let left = inbox.withLock { inbox -> Inbox in
            let left = inbox
            inbox = Inbox(failure: reason)
            return left
        }
        for core in left.added {
            core.handed.stream.close(notify: false)  // never registered: no other user
            core.finishReading(reason)
        }
        for job in left.jobs { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
        readiness.close()
    }
}
