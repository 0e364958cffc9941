#if canImport(Glibc)
import Glibc
#endif
import CLinux
import ChecklistSocket
import ChecklistThreads
import Synchronization

// Process signals for a server executable.
//
// Use, first thing in `main` (before any other thread starts, since threads
// inherit the signal mask):
//
//     ignoreBrokenPipeSignal()
//     let watcher = try SignalWatcher(signals: [SIGINT, SIGTERM, SIGHUP]) { signal in
//         if signal == SIGHUP { reloadTokens() } else { shutdownGracefully() }
//     }
//
// The watched signals are blocked in the calling thread (and in every event
// loop thread, which blocks them anyway) and read from a `signalfd` by a
// dedicated thread, which calls `onSignal` for each one. That callback may
// block (e.g. run `TCPServer.shutdown`), it only delays the next signal.

/// Ignores SIGPIPE for the whole process, so a write to a closed socket fails
/// with `EPIPE` instead of killing it. (Socket writes here already use
/// `MSG_NOSIGNAL`; this covers everything else.)
public func ignoreBrokenPipeSignal() {
    _ = signal(SIGPIPE, SIG_IGN)
}

/// Turns signals into callbacks on a dedicated thread (see above).
public final class SignalWatcher: Sendable {
    private let signalFD: Int32
    private let stopFD: Int32
    private let thread = Mutex<NativeThread?>(nil)

    /// Blocks `signals` in the calling thread and starts watching them.
    /// - Parameter onSignal: called on the watcher thread with the signal number.
    public init(signals: [Int32] = [SIGINT, SIGTERM, SIGHUP],
                onSignal: @escaping @Sendable (Int32) -> Void) throws(SocketError) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        guard pthread_sigmask(SIG_BLOCK, &set, nil) == 0 else { throw .lastError("pthread_sigmask") }
        signalFD = signalfd(-1, &set, Int32(SFD_CLOEXEC))
        guard signalFD >= 0 else { throw .lastError("signalfd") }
        stopFD = eventfd(0, Int32(EFD_CLOEXEC))
        guard stopFD >= 0 else {
            closeSocket(signalFD)
            throw .lastError("eventfd")
        }
        let (signalFD, stopFD) = (signalFD, stopFD)
        thread.withLock {
            $0 = NativeThread.spawn(name: "checklist-signal", blockedSignals: NativeThread.asyncSignals + signals) {
                Self.watch(signalFD: signalFD, stopFD: stopFD, onSignal: onSignal)
            }
        }
    }

    /// Stops watching and waits for the watcher thread. The signals stay
    /// blocked in the threads that blocked them. Idempotent; not from `onSignal`.
    public func stop() {
        guard let running = thread.withLock({ thread -> NativeThread? in
            defer { thread = nil }
            return thread
        }) else { return }
        var one: UInt64 = 1
        _ = write(stopFD, &one, 8)
        running.join()
    }

    deinit {
        stop()
        closeSocket(signalFD)
        closeSocket(stopFD)
    }

    /// Sends `signal` to the watcher thread itself (test hook: a process-wide
    /// `kill` could land on a thread that does not block it).
    package func deliverToWatcher(_ signal: Int32) {
        guard let running = thread.withLock({ $0 }) else { return }
        _ = pthread_kill(running.handle, signal)
    }

    private static func watch(signalFD: Int32, stopFD: Int32, onSignal: @Sendable (Int32) -> Void) {
        var fds = [pollfd(fd: signalFD, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)]
        while true {
            guard poll(&fds, 2, -1) >= 0 || errno == EINTR else { return }
            if fds[1].revents != 0 { return }
            guard fds[0].revents != 0 else { continue }
            var info = signalfd_siginfo()
            let n = read(signalFD, &info, MemoryLayout<signalfd_siginfo>.size)
            if n == MemoryLayout<signalfd_siginfo>.size {
                onSignal(Int32(info.ssi_signo))
            }
        }
    }
}
