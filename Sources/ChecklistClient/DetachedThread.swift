#if canImport(Glibc)
import Glibc
#endif

/// Starts OS threads for work that blocks: the connection's reader and the
/// TCP connect. Blocking calls never run on the async executor's threads.
enum DetachedThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Runs `body` on a new detached thread.
    static func start(_ body: @escaping @Sendable () -> Void) throws(ClientError) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { context in
            let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
            body.run()
            return nil
        }, context)
        guard rc == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw ClientError(.connectionFailed, "cannot start a thread: \(String(cString: strerror(rc)))")
        }
        pthread_detach(thread)
    }

    /// Runs blocking `work` on its own thread and returns its result.
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws(ClientError) -> T) async throws(ClientError) -> T {
        let result: Result<T, ClientError> = await withCheckedContinuation { continuation in
            do throws(ClientError) {
                try start {
                    continuation.resume(returning: Result { () throws(ClientError) -> T in try work() })
                }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        return try result.get()
    }
}
