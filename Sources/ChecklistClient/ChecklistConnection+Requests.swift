import ChecklistModel
import ChecklistWire

/// One method per protocol v1 request. Each throws `ClientError`: a server
/// `ERROR` answer as `.server` with its wire code (`NOT_FOUND`,
/// `CONFLICT` with the current revision, `LIMIT_EXCEEDED` with the field, ...),
/// an answer of the wrong type as `.protocolViolation`, and the connection
/// errors described on `ChecklistConnection`.
extension ChecklistConnection {
    /// Sends PING and waits for the PONG.
    ///
    /// - Parameter data: At most 1024 bytes that the server echoes.
    /// - Returns: The round-trip time.
    @discardableResult
    public func ping(data: [UInt8] = []) async throws -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        let answer = try await call(.ping(Ping(data: data)))
        let elapsed = start.duration(to: clock.now)
        guard case .pong(let pong) = answer else { throw unexpected(answer, "PONG") }
        guard pong.data == data else {
            throw ClientError(.protocolViolation, "PONG echoed \(pong.data.count) bytes that differ from the PING's \(data.count)")
        }
        return elapsed
    }

    /// The summaries of all lists, ordered by id (creation order).
    public func lists() async throws -> [ListSummary] {
        let answer = try await call(.listLists(ListLists()))
        guard case .lists(let message) = answer else { throw unexpected(answer, "LISTS") }
        return message.lists
    }

    /// Creates a list and returns its summary (revision 1, no items).
    ///
    /// - Parameters:
    ///   - name: Not empty.
    ///   - icon: Any short string; the apps use `No Icon` for none.
    public func createList(name: String, icon: String = "No Icon") async throws -> ListSummary {
        let answer = try await call(.createList(CreateList(name: name, icon: icon)))
        guard case .listCreated(let info) = answer else { throw unexpected(answer, "LIST") }
        return info.summary
    }

    /// Renames and/or re-icons a list (nil leaves a field as it is) and
    /// returns its summary after the change. The revision grows by 1 even
    /// when both are nil.
    public func updateList(_ list: ListID, name: String? = nil, icon: String? = nil) async throws -> ListSummary {
        let answer = try await call(.updateList(UpdateList(list: list, name: name, icon: icon)))
        guard case .listUpdated(let info) = answer else { throw unexpected(answer, "LIST") }
        return info.summary
    }

    /// Deletes a list with all its items.
    ///
    /// - Returns: The revision the deletion was committed as.
    @discardableResult
    public func deleteList(_ list: ListID) async throws -> Revision {
        let answer = try await call(.deleteList(DeleteList(list: list)))
        guard case .listDeleted(let deleted) = answer else { throw unexpected(answer, "LIST_DELETED") }
        return deleted.revision
    }

    /// Reads up to `limit` rows of a list, counted after `filter`.
    ///
    /// - Parameters:
    ///   - start: The filtered index of the first row, or an anchor item
    ///     that should be the first row (keeps the place while rows are
    ///     inserted above it; an anchor not in the list is `NOT_FOUND`).
    ///   - limit: 1 to `serverLimits.maxPageRows`.
    ///   - filter: All rows, checked rows only or unchecked rows only.
    public func page(_ list: ListID, start: PageStart = .offset(0), limit: Int,
                     filter: RowFilter = .all) async throws -> FetchedPage {
        let request = GetPage(list: list, filter: filter, start: start, limit: UInt64(clamping: limit))
        let answer = try await call(.getPage(request))
        guard case .page(let message) = answer else { throw unexpected(answer, "PAGE") }
        return FetchedPage(message, filter: filter)
    }

    /// Applies `ops` to a list atomically: all of them and the revision
    /// grows by exactly 1, or none (and an error is thrown).
    ///
    /// - Parameters:
    ///   - baseRevision: If set, apply only if the list is still at this
    ///     revision; otherwise the error is `CONFLICT` carrying the current
    ///     revision in `serverError.revision`.
    ///   - ops: 1 to `serverLimits.maxBatchOps` operations.
    /// - Returns: The new revision and the item ids given to each `tempRef`.
    @discardableResult
    public func patch(_ list: ListID, baseRevision: Revision? = nil, ops: [PatchOperation]) async throws -> PatchOK {
        let answer = try await call(.patch(Patch(list: list, baseRevision: baseRevision, ops: ops)))
        guard case .patchOK(let ok) = answer else { throw unexpected(answer, "PATCH_OK") }
        return ok
    }

    /// The server's operational figures (STATS): connections, requests and
    /// errors by type and code, bytes, latency percentiles, store sizes and
    /// the status of its log and snapshot. With `options` `.usage`, also the
    /// connection's namespace usage and quotas (`StatsReport.usage`; nil
    /// when the server predates it).
    public func stats(options: Stats.Options = []) async throws -> StatsReport {
        let answer = try await call(.stats(Stats(options: options)))
        guard case .statsReport(let report) = answer else { throw unexpected(answer, "STATS_REPORT") }
        return report
    }

    // MARK: Shared by the request extensions

    /// Sends `request` (within `requestTimeout`, if set) and turns an ERROR
    /// answer into a thrown `ClientError.server`.
    func call(_ request: Request) async throws -> ServerMessage {
        let answer: ServerMessage
        if let requestTimeout {
            answer = try await withTimeout(requestTimeout, "the \(request.type.name) request (limit \(requestTimeout))") { [core] in
                try await core.send(request)
            }
        } else {
            answer = try await core.send(request)
        }
        if case .error(let message) = answer { throw ClientError.server(message.error) }
        return answer
    }

    func unexpected(_ answer: ServerMessage, _ expected: String) -> ClientError {
        ClientError(.protocolViolation, "expected \(expected), the server answered with message type \(answer.type)")
    }
}
