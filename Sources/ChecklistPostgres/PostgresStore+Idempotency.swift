import ChecklistModel

/// What the idempotency memory knows of one key.
public enum IdempotencyLookup: Hashable, Sendable {
    /// Answered: send this answer again, apply nothing.
    case answered(IdempotencyMemory.Answer)
    /// At or below the client's floor and forgotten: refuse (RESYNC_REQUIRED).
    case forgotten
    /// Never seen: apply the patch.
    case unknown
}

extension PostgresStore {
    /// Looks one key up.
    public func lookUp(namespace: Namespace, client: UInt64, sequence: UInt64) throws(PostgresError) -> IdempotencyLookup {
        let result = try connection.execute(Statements.answer, [
            .text(try StoredText.namespace(namespace)), .int64(Int64(bitPattern: client)), try .id(sequence, "sequence")])
        guard result.rowCount == 1 else { return .unknown }
        if !result.isNull(0, 1) {
            return .answered(IdempotencyMemory.Answer(sequence: sequence, list: ListID(try result.uint64(0, 1)),
                                                      revision: try result.uint64(0, 2),
                                                      inserted: try InsertedRuns.decode(result.bytes(0, 3) ?? [])))
        }
        return sequence <= (try result.uint64(0, 0)) ? .forgotten : .unknown
    }

    /// The whole memory, least recently used client first, each client's
    /// answers oldest first: what `Store.restoreIdempotency` takes.
    public func idempotencyMemory() throws(PostgresError) -> IdempotencyMemory {
        let result = try connection.execute(Statements.memory)
        var clients: [IdempotencyMemory.Client] = []
        for row in 0..<result.rowCount {
            let namespace = Namespace(try result.string(row, 0) ?? "")
            let client = UInt64(bitPattern: try result.int64(row, 1))
            if clients.last.map({ $0.namespace != namespace || $0.client != client }) ?? true {
                clients.append(IdempotencyMemory.Client(namespace: namespace, client: client,
                                                        floor: try result.uint64(row, 2), answers: []))
            }
            guard !result.isNull(row, 3) else { continue }
            clients[clients.count - 1].answers.append(IdempotencyMemory.Answer(
                sequence: try result.uint64(row, 3), list: ListID(try result.uint64(row, 4)),
                revision: try result.uint64(row, 5), inserted: try InsertedRuns.decode(result.bytes(row, 6) ?? [])))
        }
        return IdempotencyMemory(clients: clients)
    }

    /// Keeps the newest `keepPerClient` answers of each client, forgets the
    /// rest and raises the floors so a retry of a forgotten key is refused.
    ///
    /// - Returns: the answers forgotten.
    @discardableResult
    public func forgetAnswers(keepPerClient: Int) throws(PostgresError) -> Int {
        Int(try connection.execute(Statements.forgetAnswers, [.int64(Int64(keepPerClient))]).int64(0, 0))
    }
}
