import ChecklistModel
import ChecklistWire
import Synchronization

/// Live sync that survives lost connections: subscriptions as an
/// `AsyncSequence` of `ChangeEvent`s that resume from the last revision
/// they reported after a reconnect, and patches that are retried with the
/// same idempotency key until the answer arrives, so each takes effect once.
///
/// ```swift
/// let sync = ChecklistSync(clientName: "my-app/1.0") {
///     try await ChecklistConnection.connect(host: "127.0.0.1", port: 7420, clientName: "my-app/1.0")
/// }
/// Task {
///     for await event in sync.subscribe([groceries.id], from: [groceries.id: groceries.revision]) {
///         if case .change(let change) = event { apply(change) }
///     }
/// }
/// try await sync.patch(groceries.id, ops: [.setChecked(.id(milk), true)])
/// ```
///
/// Every subscription has its own connection (made with `connect`);
/// patches share one, made again when it is lost. `close()` ends both.
///
/// With several servers (`init(servers:...)`), a lost connection is made
/// again to another server: when its node dies or drains (its
/// `SHUTTING_DOWN` goodbye), the subscriptions resume there and patches in
/// flight are retried there with their keys; `onReconnect` tells of each.
public final class ChecklistSync: Sendable {
    /// How reconnecting and retrying pace themselves.
    public struct RetryPolicy: Hashable, Sendable {
        /// The first pause after a failure; doubled on each further failure.
        public var initialBackoff: Duration
        /// The longest pause.
        public var maxBackoff: Duration
        /// Attempts of one patch (the first send included) before its last
        /// connection error is thrown.
        public var patchAttempts: Int

        public init(initialBackoff: Duration = .milliseconds(50), maxBackoff: Duration = .seconds(5), patchAttempts: Int = 8) {
            self.initialBackoff = initialBackoff
            self.maxBackoff = maxBackoff
            self.patchAttempts = patchAttempts
        }
    }

    public typealias Connect = @Sendable () async throws -> ChecklistConnection

    /// The client id of this instance's idempotency keys.
    public let clientID: UInt64
    public let retry: RetryPolicy
    private let connector: Connector
    private let onReconnect: (@Sendable (Reconnection) -> Void)?
    private let nextSequence: Atomic<UInt64>
    private let shared = Mutex(Shared())

    private struct Shared {
        /// The connection patches use, once made.
        var patchConnection: ChecklistConnection?
        /// The patch connection last lost, until one is made again.
        var patchLoss: Loss?
        var subscriptions: [UInt64: Task<Void, Never>] = [:]
        var nextSubscription: UInt64 = 0
        var closed = false
    }

    /// - Parameters:
    ///   - clientID: the client id of the idempotency keys; random by
    ///     default. Reuse one only with `firstSequence` above every sequence
    ///     number it used before.
    ///   - onReconnect: called each time a lost connection has been made
    ///     again (see `Reconnection`); return quickly.
    ///   - connect: makes a new connection (called again after a loss). To
    ///     fail over between several servers, use `init(servers:...)`.
    public convenience init(clientID: UInt64 = .random(in: 1...UInt64.max), firstSequence: UInt64 = 1,
                            retry: RetryPolicy = RetryPolicy(), onReconnect: (@Sendable (Reconnection) -> Void)? = nil,
                            connect: @escaping Connect) {
        self.init(clientID: clientID, firstSequence: firstSequence, retry: retry, onReconnect: onReconnect,
                  connector: Connector { _ in try await connect() })
    }

    init(clientID: UInt64, firstSequence: UInt64, retry: RetryPolicy, onReconnect: (@Sendable (Reconnection) -> Void)?,
         connector: Connector) {
        self.clientID = clientID
        self.retry = retry
        self.connector = connector
        self.onReconnect = onReconnect
        self.nextSequence = Atomic(firstSequence)
    }

    /// The server the patch connection is on, nil while there is none.
    public var patchServer: ServerAddress? {
        shared.withLock { $0.patchConnection?.server }
    }

    /// Ends every subscription stream and closes the connections.
    public func close() async {
        let (tasks, connection) = shared.withLock { s in
            s.closed = true
            defer { s.subscriptions = [:]; s.patchConnection = nil }
            return (Array(s.subscriptions.values), s.patchConnection)
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        await connection?.close()
    }

    // MARK: Patches

    /// The next idempotency key of this client.
    public func makeIdempotencyKey() -> IdempotencyKey {
        IdempotencyKey(client: clientID, sequence: nextSequence.wrappingAdd(1, ordering: .relaxed).oldValue)
    }

    /// Applies `ops` to `list` exactly once: sent with a fresh idempotency
    /// key, and sent again with the same key (on a new connection) when the
    /// connection is lost before the answer or cannot be made, up to
    /// `retry.patchAttempts` times (with several servers, the next server
    /// first). A server error is thrown at once (nothing was applied),
    /// except `SHUTTING_DOWN` and `UNAVAILABLE` (the node is draining or cut
    /// off from its database): those are retried like a lost connection;
    /// and `RATE_LIMITED`, sent again after the wait the server names.
    @discardableResult
    public func patch(_ list: ListID, baseRevision: Revision? = nil, ops: [PatchOperation]) async throws -> PatchOK {
        try await patch(list, baseRevision: baseRevision, idempotencyKey: makeIdempotencyKey(), ops: ops)
    }

    /// `patch` with a key of your own (e.g. one kept across a restart of
    /// your app, for a patch whose answer never came).
    @discardableResult
    public func patch(_ list: ListID, baseRevision: Revision? = nil, idempotencyKey: IdempotencyKey,
                      ops: [PatchOperation]) async throws -> PatchOK {
        var backoff = retry.initialBackoff
        var attempt = 1
        while true {
            do {
                let connection = try await patchConnection()
                do {
                    return try await connection.patch(list, baseRevision: baseRevision, idempotencyKey: idempotencyKey, ops: ops)
                } catch let error as ClientError where Self.retryable(error) {
                    forgetPatchConnection(connection, Loss(connection, error.description))
                    await connection.close()
                    throw error
                }
            } catch let error as ClientError where Self.retryable(error) {
                // Lost before the answer (or the server is away): the same key again.
                guard attempt < retry.patchAttempts else { throw error }
            } catch let error as ClientError where error.wireCode == .rateLimited {
                // Nothing was done: the same key again once the server said it takes one, on the same connection.
                guard attempt < retry.patchAttempts else { throw error }
                attempt += 1
                try await Task.sleep(for: .milliseconds(error.serverError?.retryAfterMilliseconds ?? 1000))
                continue
            }
            attempt += 1
            try await Task.sleep(for: backoff)
            backoff = min(backoff * 2, retry.maxBackoff)
        }
    }

    /// Failures after which a patch is sent again: it may or may not have
    /// been applied, and its key makes the retry safe either way.
    /// A node that is shutting down (`SHUTTING_DOWN`) or cut off from its
    /// database (`UNAVAILABLE`) applied nothing it refused: another may take it.
    private static func retryable(_ error: ClientError) -> Bool {
        [.connectionClosed, .timeout, .connectionFailed].contains(error.code)
            || error.wireCode == .shuttingDown || error.wireCode == .unavailable
    }

    /// A connection that takes requests: one of a server that said goodbye does not.
    private static func usable(_ connection: ChecklistConnection) -> Bool {
        !connection.isClosed && !connection.serverIsShuttingDown
    }

    private func patchConnection() async throws -> ChecklistConnection {
        if let existing = shared.withLock({ $0.patchConnection }) {
            if Self.usable(existing) { return existing }
            let why = existing.serverIsShuttingDown ? "the server is shutting down" : "the connection was lost"
            forgetPatchConnection(existing, Loss(existing, why))
        }
        let loss = shared.withLock { $0.patchLoss }
        let made = try await connector(lost: loss?.server)
        let (use, extra, told) = shared.withLock { s -> (ChecklistConnection?, ChecklistConnection?, Loss?) in
            if s.closed { return (nil, made, nil) }
            if let other = s.patchConnection, Self.usable(other) { return (other, made, nil) }
            s.patchConnection = made
            defer { s.patchLoss = nil }
            return (made, nil, s.patchLoss)
        }
        await extra?.close()
        guard let use else { throw ClientError(.connectionClosed, "the ChecklistSync was closed") }
        if let told { onReconnect?(told.reconnection(nil, to: made)) }
        return use
    }

    private func forgetPatchConnection(_ connection: ChecklistConnection, _ loss: Loss) {
        shared.withLock { s in
            guard s.patchConnection === connection else { return }
            s.patchConnection = nil
            s.patchLoss = loss
        }
    }

    // MARK: Subscriptions

    /// The changes of `lists` (and with `allLists`, of every list of the
    /// namespace, including lists created later) as they are committed.
    ///
    /// - Parameter revisions: the revision the caller has of some lists:
    ///   their changes after it come first. Lists without one start from
    ///   the revision `.subscribed` reports.
    /// - Parameter bufferLimit: events held for a slow consumer. Past it the
    ///   subscription pauses and resumes from the last event delivered, so
    ///   nothing is lost or reported twice.
    ///
    /// The stream ends when the task iterating it is cancelled, when it is
    /// dropped, on `close()`, or when every named list is gone (and not
    /// `allLists`).
    public func subscribe(_ lists: [ListID], allLists: Bool = false, from revisions: [ListID: Revision] = [:],
                          bufferLimit: Int = 4096) -> AsyncStream<ChangeEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ChangeEvent.self,
                                                            bufferingPolicy: .bufferingOldest(max(16, bufferLimit)))
        let id = shared.withLock { s -> UInt64 in
            s.nextSubscription += 1
            return s.nextSubscription
        }
        let driver = SubscriptionDriver(id: id, lists: lists, allLists: allLists, revisions: revisions, retry: retry,
                                        connector: connector, onReconnect: onReconnect, output: continuation)
        continuation.onTermination = { [weak self] _ in
            let task = self?.shared.withLock { $0.subscriptions.removeValue(forKey: id) }
            task?.cancel()
        }
        let started = shared.withLock { s -> Bool in
            guard !s.closed else { return false }
            s.subscriptions[id] = Task { await driver.run() }
            return true
        }
        if !started { continuation.finish() }
        return stream
    }
}
