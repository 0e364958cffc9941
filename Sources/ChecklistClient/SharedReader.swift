#if canImport(Glibc)
import Glibc
#endif
import CLinux
import ChecklistSocket
import ChecklistThreads
import Synchronization

/// One thread that reads every plaintext connection of the process, woken
/// by epoll: the reader side of `ConnectionCore` without a thread per
/// connection.
///
/// With a thread per connection, every answer wakes that connection's
/// thread (a context switch) before it wakes the task that waits for it;
/// with many connections on few cores those switches cost more than the
/// decoding. Here one `epoll_wait` returns every connection with bytes
/// waiting, and each gets one non-blocking read and its frames dispatched
/// (`ConnectionCore.dispatchFrames`) in turn: the answers of many
/// connections cost one wake-up. TLS connections keep their own thread (a
/// TLS read may need more bytes than one readiness brings).
///
/// Each connection's receive buffer and frame dispatch are touched only by
/// this thread, as they were by the connection's own reader thread; the
/// sockets stay blocking for the writers (reads pass `MSG_DONTWAIT`).
/// Handlers called from here (raw answers, pushes) must not block: they
/// already must not block the reader thread.
///
/// The thread is also a `TaskExecutor` (`SharedReader+Executor`): a task
/// that prefers it runs here between reads, so an answer resumes its waiting
/// task on this thread, with no hop to the cooperative pool.
final class SharedReader: Sendable {
    /// The process's reader, started on first use; nil when epoll or the
    /// thread cannot be set up (connections then get a thread each).
    static let shared: SharedReader? = SharedReader()
    /// The thread's name, under the 15 bytes Linux keeps (a connection's own reader is "checklist-reader").
    static let threadName = "checklist-io"

    /// A connection being read: its core and its receive buffer.
    private final class Reading: @unchecked Sendable {
        // @unchecked Sendable: `buffer` is used only by the shared reader
        // thread (the registering thread only creates it).
        let core: ConnectionCore
        var buffer = ReadBuffer()
        init(_ core: ConnectionCore) { self.core = core }
    }

    private let epoll: Int32
    /// The connections being read, by the token their epoll registration carries.
    private let connections = Mutex<[UInt64: Reading]>([:])
    private let nextToken = Atomic<UInt64>(1)
    /// The epoll token of `wakeFD` (connection tokens start at 1).
    private static let wakeToken: UInt64 = 0
    /// An eventfd that wakes the thread out of `epoll_wait` when a job is
    /// enqueued from another thread.
    let wakeFD: Int32
    /// The jobs of tasks that prefer this thread as their executor.
    let jobs = Mutex(JobQueue())
    /// The thread's `pthread_t` once it runs (0 before): `enqueue` on the
    /// thread itself needs no wake-up.
    let threadID = Atomic<UInt>(0)

    private init?() {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { return nil }
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = Self.wakeToken
        guard wakeFD >= 0, epoll_ctl(epoll, EPOLL_CTL_ADD, wakeFD, &event) == 0 else {
            if wakeFD >= 0 { close(wakeFD) }
            close(epoll)
            return nil
        }
        do throws(ThreadStartError) {
            try NativeThread.start(name: Self.threadName, blockedSignals: []) { [self] in
                run()
            }.detach()
        } catch {
            close(wakeFD)
            close(epoll)
            return nil
        }
    }

    /// Starts reading `core`'s socket; from now on this thread dispatches
    /// its frames and, when the socket ends, calls `core.finishReading`.
    func add(_ core: ConnectionCore) throws(ClientError) {
        let token = nextToken.wrappingAdd(1, ordering: .relaxed).oldValue
        connections.withLock { $0[token] = Reading(core) }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
        event.data.u64 = token
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, core.fd, &event) == 0 else {
            let code = errno
            connections.withLock { $0[token] = nil }
            throw ClientError(.connectionFailed, "epoll_ctl ADD failed: errno \(code)")
        }
    }

    /// The thread's body: wait, give every ready connection one read, then
    /// run the jobs its answers (or other threads) enqueued.
    private func run() {
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        let capacity = 128
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        var running: [UnownedJob] = []
        var jobsLeft = false
        while true {
            // With jobs still queued, only look for what is ready now.
            let n = epoll_wait(epoll, events, Int32(capacity), jobsLeft ? 0 : -1)
            if n < 0 {
                precondition(errno == EINTR, "epoll_wait failed: errno \(errno)")
                continue
            }
            for i in 0..<Int(n) {
                let token = events[i].data.u64
                if token == Self.wakeToken {
                    var count: UInt64 = 0
                    _ = Glibc.read(wakeFD, &count, 8)
                    continue
                }
                guard let reading = connections.withLock({ $0[token] }) else { continue }
                if let reason = read(reading) {
                    // Removed before `finishReading` closes the descriptor.
                    var none = epoll_event()
                    _ = epoll_ctl(epoll, EPOLL_CTL_DEL, reading.core.fd, &none)
                    connections.withLock { $0[token] = nil }
                    reading.core.finishReading(reason)
                }
            }
            jobsLeft = runJobs(&running)
        }
    }

    /// One non-blocking read of a ready connection, and its whole frames
    /// dispatched. Returns why the connection ended, or nil while it lasts.
    private func read(_ reading: Reading) -> ClientError? {
        let core = reading.core
        let room = reading.buffer.prepareForRead()
        let n = recv(core.fd, room.baseAddress, room.count, Int32(MSG_DONTWAIT))
        if n == 0 { return core.endOfStreamReason() }
        if n < 0 {
            let error = SocketError.lastError("read")
            if error.isWouldBlock || error.code == EINTR { return nil }
            return ClientError(.connectionClosed, "the connection was lost: \(error)")
        }
        reading.buffer.didRead(n)
        return core.dispatchFrames(in: &reading.buffer)
    }
}
