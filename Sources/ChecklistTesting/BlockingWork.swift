import Foundation

/// Runs blocking socket or process work on a thread of its own, so that it
/// never occupies a thread of Swift's cooperative pool (which async code,
/// the client library's handshake timeouts included, needs to make
/// progress). At most `limit` such bodies run at once, which also keeps
/// the many parameterized cases from starting all their servers together.
enum BlockingWork {
    static let limit = 4
    private static let gate = Gate(permits: limit)

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        await gate.acquire()
        let result: Result<T, any Error> = await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: Result { try body() })
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
        await gate.release()
        return try result.get()
    }

    /// A counting semaphore for tasks.
    private actor Gate {
        private var permits: Int
        private var waiters: [CheckedContinuation<Void, Never>] = []

        init(permits: Int) { self.permits = permits }

        func acquire() async {
            if permits > 0 {
                permits -= 1
                return
            }
            await withCheckedContinuation { waiters.append($0) }
        }

        func release() {
            if waiters.isEmpty {
                permits += 1
            } else {
                waiters.removeFirst().resume()
            }
        }
    }
}
