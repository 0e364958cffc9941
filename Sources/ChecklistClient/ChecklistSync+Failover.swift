/// `ChecklistSync` on several servers: it moves to another when its node
/// goes away, and says so.
extension ChecklistSync {
    /// One of a `ChecklistSync`'s connections was made again after it was
    /// lost: on another server (a failover) or the same one.
    ///
    /// What was in flight carries on by itself: a subscription resumes from
    /// the last revision it reported (without gap or duplicate), and a
    /// patch is sent again with its idempotency key (applied once).
    public struct Reconnection: Hashable, Sendable, CustomStringConvertible {
        /// The subscription whose connection this is (numbered 1, 2, ... in
        /// the order of `subscribe` calls), or nil for the patch connection.
        public let subscription: UInt64?
        /// The server the connection was lost from.
        public let from: ServerAddress
        /// The server it is on now.
        public let to: ServerAddress
        /// Why the old connection ended, e.g. the server's SHUTTING_DOWN goodbye.
        public let reason: String
        /// From noticing the loss to the new connection's handshake.
        public let outage: Duration

        public init(subscription: UInt64?, from: ServerAddress, to: ServerAddress, reason: String, outage: Duration) {
            self.subscription = subscription
            self.from = from
            self.to = to
            self.reason = reason
            self.outage = outage
        }

        /// True when the connection moved to another server.
        public var isFailover: Bool { from != to }

        public var description: String {
            let who = subscription.map { "subscription \($0)" } ?? "patches"
            return "\(who): left \(from) (\(reason)); on \(to) after \(outage)"
        }
    }

    /// A `ChecklistSync` whose connections go to `servers`, tried in turn:
    /// the one that answered last first; when a connection is lost (the
    /// node died, or drained with its `SHUTTING_DOWN` goodbye), the next
    /// servers first, with the retry policy's backoff between rounds.
    ///
    /// - Parameters:
    ///   - servers: `checklistd` nodes serving the same data
    ///     (docs/SEVERAL-NODES.md, "Running several nodes"); not empty.
    ///   - clientName, token, compression, timeout, requestTimeout, tls: as
    ///     in `ChecklistConnection.connect`; `timeout` applies to each server.
    ///   - onReconnect: called (on a task of the sync, not the main actor;
    ///     return quickly) each time a lost connection has been made again,
    ///     so an app can show that it failed over.
    public convenience init(servers: [ServerAddress], clientName: String, token: String? = nil,
                            compression: Bool = true, timeout: Duration = .seconds(10), requestTimeout: Duration? = nil,
                            tls: TLSClientConfiguration? = nil,
                            clientID: UInt64 = .random(in: 1...UInt64.max), firstSequence: UInt64 = 1,
                            retry: RetryPolicy = RetryPolicy(),
                            onReconnect: (@Sendable (Reconnection) -> Void)? = nil) {
        let rotation = ServerRotation(servers)
        self.init(clientID: clientID, firstSequence: firstSequence, retry: retry, onReconnect: onReconnect,
                  connector: Connector { lost in
                      let connection = try await ChecklistConnection.connect(
                          servers: rotation.order(avoiding: lost), clientName: clientName, token: token,
                          compression: compression, timeout: timeout, requestTimeout: requestTimeout, tls: tls)
                      rotation.answered(connection.server)
                      return connection
                  })
    }

    /// Makes a connection; told the server a connection was just lost from
    /// (nil for a first connection), to try the others first.
    struct Connector: Sendable {
        let make: @Sendable (_ lost: ServerAddress?) async throws -> ChecklistConnection

        func callAsFunction(lost: ServerAddress? = nil) async throws -> ChecklistConnection {
            try await make(lost)
        }
    }

    /// Where a connection was lost and when: what a `Reconnection` is made of.
    struct Loss: Sendable {
        let server: ServerAddress
        let reason: String
        let at: ContinuousClock.Instant

        init(_ connection: ChecklistConnection, _ reason: String) {
            server = connection.server
            self.reason = reason
            at = .now
        }

        func reconnection(_ subscription: UInt64?, to connection: ChecklistConnection) -> Reconnection {
            Reconnection(subscription: subscription, from: server, to: connection.server, reason: reason,
                         outage: at.duration(to: .now))
        }
    }
}
