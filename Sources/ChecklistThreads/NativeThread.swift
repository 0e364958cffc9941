#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if os(Linux)
import CLinux  // the two-argument pthread_setname_np
#endif

/// A POSIX thread running a closure: the one way this package starts a
/// thread of its own (event loops, the signal watcher, the log flusher, the
/// compression and transfer workers, the client's reader, test helpers).
/// Nothing is shared beyond the `pthread_t`. A thread is either joined
/// (`join`) or detached (`detach`), exactly once.
package struct NativeThread: Sendable {
    /// The thread's POSIX handle.
    package let handle: pthread_t

    /// Starts `body` on a new thread named `name` (at most 15 bytes are
    /// kept). The signals `blockedSignals` are blocked in the new thread
    /// before `body` runs. Throws if the system has no thread to give.
    package static func start(name: String, blockedSignals: [Int32] = NativeThread.asyncSignals,
                              _ body: @escaping @Sendable () -> Void) throws(ThreadStartError) -> NativeThread {
        let start = Unmanaged.passRetained(Start(name: name, blockedSignals: blockedSignals, body: body)).toOpaque()
        #if os(Linux)
        var handle = pthread_t()
        let rc = pthread_create(&handle, nil, { raw in
            NativeThread.run(Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue())
            return nil
        }, start)
        #else
        var created: pthread_t?
        let rc = pthread_create(&created, nil, { raw in
            NativeThread.run(Unmanaged<Start>.fromOpaque(raw).takeRetainedValue())
            return nil
        }, start)
        #endif
        guard rc == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw ThreadStartError(name: name, errno: rc)
        }
        #if os(Linux)
        return NativeThread(handle: handle)
        #else
        return NativeThread(handle: created!)
        #endif
    }

    /// The new thread's first act: its name (at most 15 bytes), its signal
    /// mask, then the body.
    private static func run(_ start: Start) {
        let name = String(start.name.utf8.prefix(15))!
        #if os(Linux)
        _ = pthread_setname_np(pthread_self(), name)
        #else
        // Apple's pthread_setname_np names the calling thread only.
        _ = pthread_setname_np(name)
        #endif
        NativeThread.block(start.blockedSignals)
        start.body()
    }

    /// `start`, for callers that cannot go on without the thread: a failure
    /// to start one stops the process.
    package static func spawn(name: String, blockedSignals: [Int32] = NativeThread.asyncSignals,
                              _ body: @escaping @Sendable () -> Void) -> NativeThread {
        do throws(ThreadStartError) {
            return try start(name: name, blockedSignals: blockedSignals, body)
        } catch {
            preconditionFailure(error.description)
        }
    }

    /// Runs blocking `work` on a detached thread of its own and returns what
    /// it returned or threw, so that blocking calls (a socket read, a
    /// connect, waiting for a process) never hold one of Swift's cooperative
    /// threads. Nothing is blocked in that thread's signal mask.
    package static func result<T: Sendable, E: Error>(
        ofBlocking work: @escaping @Sendable () throws(E) -> T, name: String
    ) async throws(ThreadStartError) -> Result<T, E> {
        let started: Result<Result<T, E>, ThreadStartError> = await withCheckedContinuation { continuation in
            do throws(ThreadStartError) {
                try start(name: name, blockedSignals: []) {
                    continuation.resume(returning: .success(Result { () throws(E) -> T in try work() }))
                }.detach()
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        return try started.get()
    }

    /// Waits for the thread to finish.
    package func join() {
        _ = pthread_join(handle, nil)
    }

    /// Lets the thread's resources go when it finishes; it is not joined.
    package func detach() {
        _ = pthread_detach(handle)
    }

    /// The calling thread.
    package static var isCurrent: pthread_t { pthread_self() }

    /// Signals that loop and helper threads never take: they are either
    /// ignored (SIGPIPE; sends never raise it: `noSignalSendFlags`, `SO_NOSIGPIPE`) or meant for a
    /// `SignalWatcher` thread or the main thread.
    package static let asyncSignals: [Int32] = [SIGPIPE, SIGINT, SIGTERM, SIGHUP]

    /// Blocks `signals` in the calling thread.
    package static func block(_ signals: [Int32]) {
        guard !signals.isEmpty else { return }
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        _ = pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// What the new thread needs, handed over through `pthread_create`'s
    /// one pointer (retained until the thread takes it).
    private final class Start {
        let name: String
        let blockedSignals: [Int32]
        let body: @Sendable () -> Void
        init(name: String, blockedSignals: [Int32], body: @escaping @Sendable () -> Void) {
            self.name = name
            self.blockedSignals = blockedSignals
            self.body = body
        }
    }
}

/// The system refused a new thread (`pthread_create` failed).
package struct ThreadStartError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The name the thread would have had.
    package var name: String
    /// `pthread_create`'s result (an errno value such as EAGAIN).
    package var errno: Int32

    package var description: String {
        "cannot start thread \(name): \(String(cString: strerror(errno)))"
    }
}
