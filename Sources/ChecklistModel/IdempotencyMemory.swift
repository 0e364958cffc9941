/// What the store remembers of answered idempotency keys (Protocol/SPEC.md
/// section 9), as plain values, client by client: what a snapshot keeps so
/// that a restart from it (the log before it is gone) still answers retries
/// instead of applying them again (Protocol/SNAPSHOT.md section 3.8).
///
/// Restoring it (`Store.restoreIdempotency(_:)`) gives the same answers,
/// floors and least-recently-used order of clients. Only the order in which
/// answers of *different* clients were recorded is not kept: a restored
/// memory that later outgrows its global bound forgets the answers of the
/// least recently used clients first. Forgetting is always safe: a forgotten
/// key at or below its client's floor is refused, never applied again.
public struct IdempotencyMemory: Hashable, Sendable {
    /// One answered patch of a client.
    public struct Answer: Hashable, Sendable {
        /// The key's sequence number.
        public var sequence: UInt64
        /// The list the patch changed.
        public var list: ListID
        /// The list's revision after the patch (what `PATCH_OK` answered).
        public var revision: Revision
        /// The ids the patch's inserts got, in operation order, as runs.
        public var inserted: [ItemIDRun]

        public init(sequence: UInt64, list: ListID, revision: Revision, inserted: [ItemIDRun]) {
            self.sequence = sequence
            self.list = list
            self.revision = revision
            self.inserted = inserted
        }
    }

    /// One client (namespace and client id) and what is remembered of it:
    /// also what one IDEMPOTENCY snapshot record holds.
    public struct Client: Hashable, Sendable {
        public typealias Answer = IdempotencyMemory.Answer

        public var namespace: Namespace
        public var client: UInt64
        /// The highest sequence number the memory has forgotten for this
        /// client (0: none). A retry at or below it that is not among
        /// `answers` is refused (`RESYNC_REQUIRED`).
        public var floor: UInt64
        /// Oldest first.
        public var answers: [Answer]

        public init(namespace: Namespace, client: UInt64, floor: UInt64, answers: [Answer]) {
            self.namespace = namespace
            self.client = client
            self.floor = floor
            self.answers = answers
        }
    }

    /// Least recently used first.
    public var clients: [Client]

    public init(clients: [Client] = []) {
        self.clients = clients
    }

    /// Remembered answers of all clients.
    public var answerCount: Int { clients.reduce(0) { $0 + $1.answers.count } }
}
