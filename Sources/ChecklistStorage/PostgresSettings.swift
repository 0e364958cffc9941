import ChecklistPostgres

/// How `PostgresStorage` runs its database threads (docs/POSTGRES.md,
/// "Upkeep" and "Statement timeout").
public struct PostgresSettings: Sendable, Hashable {
    /// `statement_timeout` of the committer's and the upkeep's connections
    /// (`--postgres-statement-timeout`): a statement stuck longer (on a lock,
    /// a stalled server) fails its batch instead of holding the node's
    /// answers. Nil: none. The start's load has none (a huge list may take
    /// long to read).
    public var statementTimeout: Duration? = .seconds(30)

    /// How long one call of a list's load (the loaders', the follower's),
    /// which runs no statement timeout (a big list may rightly take long to
    /// read), may wait for the database's answer before its link counts as
    /// passing no bytes: the statement timeout, at least 30 s, plus the margin.
    public var loadReplyLimit: Duration {
        max(statementTimeout ?? .seconds(30), .seconds(30)) + PostgresConnection.replyMargin
    }

    /// The same for the loaders' other reads, which a request waits on (a
    /// catch-up to a revision, an idempotency key, stored changes): the
    /// statement timeout plus the margin, as a commit's calls.
    public var readReplyLimit: Duration? {
        statementTimeout.map { $0 + PostgresConnection.replyMargin }
    }
    /// A list gets a new checkpoint once it has at least this many changes
    /// after its last one (`--postgres-checkpoint-after`).
    public var checkpointAfter: Int = 1000
    /// ... or once its changes after the last one hold this many bytes: an
    /// IMPORT (one change holding the whole list) gets its checkpoint, so a
    /// load reads the snapshot format instead of replaying the import.
    public var checkpointAfterBytes: Int = 1 << 20
    /// Changes kept per list for CHANGES_SINCE when the feed is trimmed
    /// (`--retain-changes`, the live-sync retention).
    public var retainChangesPerList: Int = 1000
    /// Answers kept per idempotency client (the store's own bound, Protocol/SPEC.md section 9).
    public var answersPerClient: Int = 1024
    /// A deleted list's marker in `changes` is dropped this long after the deletion.
    public var keepDeletions: Duration = .seconds(24 * 3600)
    /// Trimming of the feed, deletion markers and answers runs at most this
    /// often (the first upkeep pass runs it at once).
    public var housekeepingInterval: Duration = .seconds(60)

    /// The node's cache of lists (`--cache-bytes`): only the lists'
    /// summaries are loaded at start, rows on first use within its budget.
    /// Nil loads every list whole (offline `export|import`).
    public var cache: ListCache.Configuration?

    public init() {}
}
