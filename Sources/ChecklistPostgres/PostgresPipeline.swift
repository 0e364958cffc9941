/// Statements to send in one flight (libpq's pipeline mode,
/// `PostgresConnection.run(_:)`): all of them leave before the first answer
/// is read, so a pipeline of any length costs one round trip.
///
/// The statements run in order. **Sync points** (`sync()`, and one always
/// at the end) split the pipeline into segments: an error aborts the rest of
/// its segment (those statements are not run) and the statements after the
/// next sync point run again. Outside `BEGIN`...`COMMIT` each segment is a
/// transaction of its own; inside one, a statement that failed leaves the
/// transaction failed (the caller rolls it back), whatever follows.
///
/// As everywhere in this layer, SQL is a constant (`StaticString` or a
/// `PostgresStatement`, prepared on first use in the same flight) and values
/// travel as binary parameters. A statement takes one command: no `;`-joined
/// scripts (the extended protocol refuses them).
public struct PostgresPipeline {
    enum Step {
        case text(StaticString, [PostgresValue])
        case prepared(PostgresStatement, [PostgresValue])
        case sync
    }

    private(set) var steps: [Step] = []
    /// Statements appended (sync points not counted).
    public private(set) var count = 0

    public init() {}

    /// Appends a prepared statement (prepared on this connection first, in
    /// the same flight, if this is its first use here).
    public mutating func append(_ statement: PostgresStatement, _ parameters: [PostgresValue] = []) {
        steps.append(.prepared(statement, parameters))
        count += 1
    }

    /// Appends one constant SQL command with `parameters` ($1, $2, ...).
    public mutating func append(_ sql: StaticString, _ parameters: [PostgresValue] = []) {
        steps.append(.text(sql, parameters))
        count += 1
    }

    /// Ends the current segment: an error before this point does not abort
    /// the statements after it.
    public mutating func sync() {
        if case .sync? = steps.last { return }
        steps.append(.sync)
    }
}

/// What each statement of a `PostgresPipeline` gave, in order.
///
/// A statement the server refused carries its error as `execute` would
/// throw it (`STATEMENT_FAILED` with its SQLSTATE, `CONNECTION_LOST`); the
/// statements its failure aborted carry an error of the same code saying
/// they were not run (no SQLSTATE); after a lost connection every statement
/// not answered is `CONNECTION_LOST` (whether it ran is unknown).
public struct PostgresPipelineResults {
    public let outcomes: [Result<PostgresResult, PostgresError>]

    /// The first statement that failed (not one merely aborted), with its error.
    public var firstFailure: (index: Int, error: PostgresError)? {
        for (index, outcome) in outcomes.enumerated() {
            if case .failure(let error) = outcome { return (index, error) }
        }
        return nil
    }

    /// Every statement's result, or the first failure's error.
    public func get() throws(PostgresError) -> [PostgresResult] {
        if let failure = firstFailure { throw failure.error }
        return outcomes.map { outcome in
            guard case .success(let result) = outcome else { preconditionFailure("no failure, yet an error") }
            return result
        }
    }

    /// Statement `index`'s result, or its error.
    public func result(_ index: Int) throws(PostgresError) -> PostgresResult {
        try outcomes[index].get()
    }
}
