#if canImport(Glibc)
import Glibc
#endif
import CLinux

/// A joinable POSIX thread running a closure. Event loops and the signal
/// watcher each own one; nothing here is shared beyond the `pthread_t`.
struct NativeThread: Sendable {
    let handle: pthread_t

    /// Starts `body` on a new thread named `name` (at most 15 bytes are kept).
    /// The signals `blockedSignals` are blocked in the new thread before `body` runs.
    static func spawn(name: String, blockedSignals: [Int32] = NativeThread.asyncSignals,
                      _ body: @escaping @Sendable () -> Void) -> NativeThread {
        final class Start {
            let name: String
            let blockedSignals: [Int32]
            let body: @Sendable () -> Void
            init(name: String, blockedSignals: [Int32], body: @escaping @Sendable () -> Void) {
                self.name = name
                self.blockedSignals = blockedSignals
                self.body = body
            }
        }
        let start = Unmanaged.passRetained(Start(name: name, blockedSignals: blockedSignals, body: body)).toOpaque()
        var handle = pthread_t()
        let rc = pthread_create(&handle, nil, { raw in
            let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
            _ = pthread_setname_np(pthread_self(), String(start.name.utf8.prefix(15))!)
            NativeThread.block(start.blockedSignals)
            start.body()
            return nil
        }, start)
        precondition(rc == 0, "pthread_create failed: \(rc)")
        return NativeThread(handle: handle)
    }

    /// Waits for the thread to finish.
    func join() {
        _ = pthread_join(handle, nil)
    }

    static var isCurrent: pthread_t { pthread_self() }

    /// Signals that loop and helper threads never take: they are either
    /// ignored (SIGPIPE; writes use MSG_NOSIGNAL anyway) or meant for a
    /// `SignalWatcher` thread or the main thread.
    static let asyncSignals: [Int32] = [SIGPIPE, SIGINT, SIGTERM, SIGHUP]

    /// Blocks `signals` in the calling thread.
    static func block(_ signals: [Int32]) {
        guard !signals.isEmpty else { return }
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        _ = pthread_sigmask(SIG_BLOCK, &set, nil)
    }
}
