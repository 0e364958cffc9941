import ChecklistStorage
import ChecklistLog
import ChecklistModel
import ChecklistStore
import ChecklistWire

/// Carries out decoded requests against the store and encodes the answers.
/// Stateless apart from its references, so one instance serves every
/// connection on every thread.
final class RequestDispatcher: Sendable {
    let store: Store
    let serverName: String
    let limits: Limits
    /// What STATS reports.
    let metrics: ServerMetrics
    /// Live sync (SUBSCRIBE, CHANGES_SINCE), answered by the connection's
    /// `LiveSyncSession`; nil when the server runs without it.
    let liveSync: SubscriptionHub?
    /// EXPORT and IMPORT, answered by the connection's `SnapshotSession`.
    let snapshots: SnapshotTransfers
    /// The lists in memory, when the storage loads rows on first use
    /// (PostgreSQL): the session has a request's lists loaded before it
    /// is handled here.
    let cache: ListCache?
    /// Requests a second per namespace, checked by the session before a request is handled; nil: no limit.
    let rateLimiter: RateLimiter?
    /// Whether the PATCHes one read brings in are applied as one batch
    /// (`ProtocolSession.stagePatch`): when the storage takes batches
    /// (`ServerStorage.takesPatchBatches`) or there is none, and no list
    /// cache parks requests.
    let batchesPatches: Bool

    init(store: Store, serverName: String, limits: Limits, metrics: ServerMetrics, liveSync: SubscriptionHub? = nil,
         snapshots: SnapshotTransferConfiguration = SnapshotTransferConfiguration(), log: ServerLog? = nil,
         cache: ListCache? = nil, rateLimit: RateLimiter.Settings? = nil, batchesPatches: Bool = false) {
        self.cache = cache
        self.batchesPatches = batchesPatches && cache == nil
        self.rateLimiter = rateLimit.map(RateLimiter.init)
        self.snapshots = SnapshotTransfers(configuration: snapshots, log: log)
        self.store = store
        self.serverName = serverName
        self.limits = limits
        self.metrics = metrics
        self.liveSync = liveSync
    }

    /// What an answer written by `handle` must wait for beyond its own
    /// commit (`AnswerHolder`): at most one thing. Mostly `none`, which an
    /// enum holds (and drops) without touching a reference, once per request.
    enum Waits {
        case none
        /// A keyed PATCH answered from the idempotency memory (a retry):
        /// its key. The original may still be in flight, and a rebase of it
        /// changes the answer.
        case retried(RetriedPatch)
        /// A PAGE of a list whose changes in flight it shows.
        case uncommittedRead(UncommittedRead)
        /// A keyed PATCH this node would refuse while its key is unknown
        /// here (`looksUpRefusedKeys`): nothing was answered; the request
        /// waits while the database is read for the key, then comes again.
        case refusedKey(RetriedPatch)

        var retried: RetriedPatch? {
            if case .retried(let key) = self { key } else { nil }
        }
        var uncommittedRead: UncommittedRead? {
            if case .uncommittedRead(let read) = self { read } else { nil }
        }
        var refusedKey: RetriedPatch? {
            if case .refusedKey(let key) = self { key } else { nil }
        }
    }

    /// Answers one request (already past the handshake) into `answers`,
    /// and says what the answer must wait for.
    ///
    /// - Parameter looksUpRefusedKeys: a keyed PATCH the store refuses
    ///   (other than for an unreachable database or a shutdown) is not
    ///   answered but returned as `Waits.refusedKey`: on a node of several,
    ///   another node may have answered its key (a retry sent here), and
    ///   that answer is owed. A key this node remembers is answered from
    ///   its memory, or refused for the key itself; reading the database
    ///   again changes nothing then, and refusals are rare.
    @discardableResult
    func handle(_ request: Request, namespace: Namespace, requestID: UInt32, into answers: inout AnswerWriter,
                looksUpRefusedKeys: Bool = false) -> Waits {
        do {
            switch request {
            case .hello:
                throw ChecklistError(.badState, "HELLO was already accepted on this connection")
            case .ping(let ping):
                answers.append(Pong(data: ping.data), requestID: requestID)
            case .listLists:
                guard let committed = liveSync?.committedRevisions else {
                    answers.append(Lists(lists: store.lists(in: namespace)), requestID: requestID)
                    break
                }
                let (lists, ahead) = store.listsAhead(in: namespace, committed: committed)
                answers.append(Lists(lists: lists), requestID: requestID)
                if !ahead.isEmpty { return .uncommittedRead(UncommittedRead(rewrites: ahead)) }
            case .createList(let m):
                let summary = try store.createList(in: namespace, name: m.name, icon: m.icon)
                answers.append(ListInfo(summary: summary), requestID: requestID)
            case .updateList(let m):
                let summary = try store.updateList(in: namespace, list: m.list, name: m.name, icon: m.icon)
                answers.append(type: .listUpdated, requestID: requestID) { ListInfo(summary: summary).encode(into: &$0) }
            case .deleteList(let m):
                let revision = try store.deleteList(in: namespace, list: m.list)
                answers.append(ListDeleted(list: m.list, revision: revision), requestID: requestID)
            case .getPage(let m):
                let rows = try store.pageRows(in: namespace, list: m.list, start: m.start, limit: Int(clamping: m.limit),
                                              filter: m.filter, committed: liveSync?.committedRevisions)
                // The store is no longer locked: encoding and compressing hold nobody up.
                page(rows, requestID: requestID, into: &answers)
                if rows.committedRevision < rows.summary.revision {
                    return .uncommittedRead(UncommittedRead(rewrites: [m.list: rows.rewrites]))
                }
            case .patch(let m):
                let result: PatchResult
                do {
                    result = try store.patch(in: namespace, list: m.list, baseRevision: m.baseRevision, ops: m.ops,
                                             idempotencyKey: m.idempotencyKey)
                } catch {
                    guard looksUpRefusedKeys, let key = m.idempotencyKey, error.code != .unavailable,
                          error.code != .shuttingDown else { throw error }
                    return .refusedKey(RetriedPatch(namespace: namespace, key: key))
                }
                return answer(.success(result.answer), list: m.list, key: m.idempotencyKey, namespace: namespace,
                              requestID: requestID, into: &answers)
            case .stats(let m):
                var report = metrics.report()
                if m.options.contains(.usage) { report.usage = usageStatus(of: namespace) }
                answers.append(report, requestID: requestID)
            case .subscribe, .unsubscribe, .changesSince:
                throw ChecklistError(.internalError, "\(request.type.name) is answered by the connection's live-sync session")
            case .export, .import:
                throw ChecklistError(.internalError, "\(request.type.name) is answered by the connection's snapshot session")
            }
        } catch let error as ChecklistError {
            answers.fail(error, requestID: requestID)
        } catch {
            answers.fail(ChecklistError(.internalError, "\(error)"), requestID: requestID)
        }
        return .none
    }

    /// Answers a PATCH of `list` (with idempotency key `key`, if any) that
    /// the store applied or refused as `result`: PATCH_OK or ERROR, and
    /// what a PATCH_OK from the idempotency memory waits for. One request
    /// at a time (`handle`) and a batch (`ProtocolSession.applyStagedPatches`)
    /// answer through here alike.
    func answer(_ result: Result<PatchAnswer, ChecklistError>, list: ListID, key: IdempotencyKey?, namespace: Namespace,
                requestID: UInt32, into answers: inout AnswerWriter) -> Waits {
        switch result {
        case .success(let result):
            answers.append(PatchOK(list: list, revision: result.revision, ids: result.ids), requestID: requestID)
            if result.isRepeat, let key { return .retried(RetriedPatch(namespace: namespace, key: key)) }
        case .failure(let error):
            answers.fail(error, requestID: requestID)
        }
        return .none
    }

    /// Encodes a PAGE from the rows `Store.pageRows` resolved (`PageEncoder`).
    private func page(_ rows: PageRows, requestID: UInt32, into answers: inout AnswerWriter) {
        let withKeys = answers.sendsClientKeys
        answers.append(type: .page, requestID: requestID) { w in
            PageEncoder.write(rows, withKeys: withKeys, maxFrameBytes: limits.maxFrameBytes, into: &w)
        }
    }
}
