import CPostgres

extension PostgresConnection {
    /// Sends every statement of `pipeline` in one flight and reads each
    /// one's answer (libpq pipeline mode: `PQenterPipelineMode`,
    /// `PQsendPrepare`/`PQsendQueryPrepared`/`PQsendQueryParams`,
    /// `PQpipelineSync`, `PQgetResult`, `PQexitPipelineMode`).
    ///
    /// The connection stays blocking, as for `execute`: libpq waits for the
    /// socket in the same way (the link limits of `LinkTimeouts` bound a dead
    /// link the same), and while it cannot send it reads what the server
    /// already answered, so a long pipeline cannot deadlock. On return the
    /// connection is out of pipeline mode, ready for `execute`, unless it
    /// was lost (`isUsable` false).
    ///
    /// `whileInFlight` runs once everything is sent, before the first
    /// answer is read: work of the caller's that the server's need not wait
    /// for (it must not use the connection).
    ///
    /// - Returns: each statement's result or error (`PostgresPipelineResults`).
    /// - Throws: `CONNECTION_LOST` when the connection is not usable, or
    ///   `MISUSE` when libpq refuses pipeline mode; nothing was sent then.
    public func run(_ pipeline: PostgresPipeline, whileInFlight: () -> Void = {}) throws(PostgresError) -> PostgresPipelineResults {
        guard isUsable else { throw PostgresError(.connectionLost, "the connection is lost") }
        guard PQenterPipelineMode(handle) == 1 else {
            throw PostgresError(isUsable ? .misuse : .connectionLost, "entering pipeline mode: \(Self.message(of: handle))")
        }
        var flight = PipelineFlight(statements: pipeline.count)
        bounded {
            send(pipeline, &flight)
            whileInFlight()
            receive(&flight)
        }
        if replyTimedOut {
            flight.lost(replyTimeoutError)
        } else if PQstatus(handle) == CONNECTION_OK, PQexitPipelineMode(handle) != 1 {
            // Every answer was read, so libpq must let go; if it does not,
            // the connection can run nothing more: it reports itself lost.
            stuckInPipeline = true
            flight.lost(PostgresError(.connectionLost, "leaving pipeline mode: \(Self.message(of: handle))"))
        }
        return PostgresPipelineResults(outcomes: flight.finished)
    }

    /// Queues every step (preparing a statement first where this connection
    /// has not prepared it), then a sync point, and flushes. A step libpq
    /// refuses to queue (a lost connection) ends the sending: it and the
    /// statements after it fail unsent.
    private func send(_ pipeline: PostgresPipeline, _ flight: inout PipelineFlight) {
        var index = 0
        var preparing: Set<String> = []
        for step in pipeline.steps {
            var queued = true
            switch step {
            case .sync:
                queued = PQpipelineSync(handle) == 1
                if queued { flight.expected.append(.sync) }
            case .text(let sql, let parameters):
                let text = sql.description
                queued = Self.withEncoded(parameters) { count, types, values, lengths, formats in
                    PQsendQueryParams(handle, text, count, types, values, lengths, formats, 1)
                } == 1
            case .prepared(let statement, let parameters):
                if !prepared.contains(statement.name), preparing.insert(statement.name).inserted {
                    let types = parameters.map(\.oid)
                    queued = types.withUnsafeBufferPointer { types in
                        PQsendPrepare(handle, statement.name, statement.sql, Int32(types.count), types.baseAddress)
                    } == 1
                    if queued { flight.expected.append(.prepare(statement.name, for: index)) }
                }
                if queued {
                    queued = Self.withEncoded(parameters) { count, _, values, lengths, formats in
                        PQsendQueryPrepared(handle, statement.name, count, values, lengths, formats, 1)
                    } == 1
                }
            }
            guard queued else {
                flight.unsent(from: index, PostgresError(isUsable ? .statementFailed : .connectionLost,
                                                         "not sent: \(Self.message(of: handle))"))
                break
            }
            if !step.isSync {
                flight.expected.append(.statement(index))
                index += 1
            }
        }
        if case .sync? = flight.expected.last { return }
        if PQpipelineSync(handle) == 1 { flight.expected.append(.sync) }
    }

    /// Reads the answers in the order the steps were queued.
    private func receive(_ flight: inout PipelineFlight) {
        var prepareErrors: [Int: PostgresError] = [:]
        for step in flight.expected {
            guard PQstatus(handle) == CONNECTION_OK else {
                flight.lost(PostgresError(.connectionLost, Self.message(of: handle)))
                return
            }
            switch step {
            case .sync:
                guard let raw = PQgetResult(handle) else { continue }
                let status = PQresultStatus(raw)
                PQclear(raw)
                if status != PGRES_PIPELINE_SYNC, PQstatus(handle) == CONNECTION_OK {
                    stuckInPipeline = true
                    flight.lost(PostgresError(.connectionLost, "pipeline out of step: status \(status.rawValue) at a sync point"))
                    return
                }
            case .prepare(let name, let statement):
                switch takeCommand() {
                case .success: prepared.insert(name)
                case .failure(let error): prepareErrors[statement] = error
                case .aborted: break
                }
            case .statement(let index):
                switch takeCommand() {
                case .success(let result): flight.answer(index, .success(result))
                case .failure(let error): flight.fail(index, prepareErrors[index] ?? error)
                case .aborted:
                    if let error = prepareErrors[index] { flight.fail(index, error) } else { flight.abort(index) }
                }
            }
        }
    }

    /// What one queued command answered.
    private enum CommandAnswer {
        case success(PostgresResult)
        case failure(PostgresError)
        /// Not run: an earlier command of its segment failed.
        case aborted
    }

    /// Reads one command's result, and the null that ends it.
    private func takeCommand() -> CommandAnswer {
        guard let raw = PQgetResult(handle) else {
            let lost = PQstatus(handle) != CONNECTION_OK
            return .failure(PostgresError(.connectionLost, lost ? Self.message(of: handle) : "pipeline out of step: no result"))
        }
        let answer: CommandAnswer
        if PQresultStatus(raw) == PGRES_PIPELINE_ABORTED {
            PQclear(raw)
            answer = .aborted
        } else {
            do throws(PostgresError) {
                answer = .success(try check(raw))
            } catch {
                answer = .failure(error)
            }
        }
        // One result per command this layer sends, then the null that ends it.
        while let extra = PQgetResult(handle) { PQclear(extra) }
        return answer
    }
}

/// The bookkeeping of one `run`: what was queued, and each statement's outcome.
private struct PipelineFlight {
    enum Expected {
        case prepare(String, for: Int)
        case statement(Int)
        case sync
    }

    var expected: [Expected] = []
    /// Each statement's outcome; nil until answered.
    private var outcomes: [Result<PostgresResult, PostgresError>?]
    /// The first statement that failed, and how.
    private var firstFailure: (index: Int, code: PostgresError.Code)?

    init(statements: Int) {
        outcomes = Array(repeating: nil, count: statements)
    }

    /// Every outcome (a statement never answered: `CONNECTION_LOST`).
    var finished: [Result<PostgresResult, PostgresError>] {
        outcomes.map { $0 ?? .failure(PostgresError(.connectionLost, "no answer")) }
    }

    mutating func answer(_ index: Int, _ outcome: Result<PostgresResult, PostgresError>) {
        outcomes[index] = outcome
    }

    mutating func fail(_ index: Int, _ error: PostgresError) {
        outcomes[index] = .failure(error)
        if firstFailure == nil { firstFailure = (index, error.code) }
    }

    /// Statement `index` was not run: an earlier one of its segment failed.
    mutating func abort(_ index: Int) {
        let cause = firstFailure.map { "statement \($0.index) of the pipeline failed" } ?? "an earlier step failed"
        outcomes[index] = .failure(PostgresError(firstFailure?.code ?? .statementFailed, "not run: \(cause)"))
    }

    /// Statements from `index` on were never queued: they fail with `error`.
    mutating func unsent(from index: Int, _ error: PostgresError) {
        for i in index..<outcomes.count { fail(i, error) }
    }

    /// The connection was lost: every statement not answered fails with `error`.
    mutating func lost(_ error: PostgresError) {
        for i in outcomes.indices where outcomes[i] == nil { fail(i, error) }
    }
}

private extension PostgresPipeline.Step {
    var isSync: Bool { if case .sync = self { true } else { false } }
}
