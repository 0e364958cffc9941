import ChecklistThreads

/// Runs blocking socket or process work on a thread of its own, so that it
/// never occupies a thread of Swift's cooperative pool (which async code,
/// the client library's handshake timeouts included, needs to make
/// progress). The one off-pool runner of the tests, tools and benchmarks.
public enum BlockingWork {
    /// How many `throttled` bodies run at once.
    public static let limit = 4
    private static let gate = Gate(permits: limit)

    /// Runs `body` on a new thread and returns what it returned or threw.
    /// With `throttled`, at most `limit` such bodies run at once, which keeps
    /// many parameterized cases from starting all their servers together;
    /// bodies that wait for each other must not be throttled.
    public static func run<T: Sendable>(throttled: Bool = false,
                                        _ body: @escaping @Sendable () throws -> T) async throws -> T {
        if throttled { await gate.acquire() }
        let outcome: Result<T, any Error>
        do {
            outcome = try await NativeThread.result(ofBlocking: { () throws(any Error) -> T in try body() }, name: "blocking-work")
        } catch {
            outcome = .failure(error)
        }
        if throttled { await gate.release() }
        return try outcome.get()
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
