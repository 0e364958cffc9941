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

    init(store: Store, serverName: String, limits: Limits, metrics: ServerMetrics, liveSync: SubscriptionHub? = nil,
         snapshots: SnapshotTransferConfiguration = SnapshotTransferConfiguration(), log: ServerLog? = nil) {
        self.snapshots = SnapshotTransfers(configuration: snapshots, log: log)
        self.store = store
        self.serverName = serverName
        self.limits = limits
        self.metrics = metrics
        self.liveSync = liveSync
    }

    /// Answers one request (already past the handshake) into `out`.
    func handle(_ request: Request, namespace: Namespace, requestID: UInt32,
                into out: inout WireWriter, encoder: inout FrameEncoder) {
        do {
            switch request {
            case .hello:
                throw ChecklistError(.badState, "HELLO was already accepted on this connection")
            case .ping(let ping):
                encoder.append(Pong(data: ping.data), requestID: requestID, to: &out)
            case .listLists:
                encoder.append(Lists(lists: store.lists(in: namespace)), requestID: requestID, to: &out)
            case .createList(let m):
                let summary = try store.createList(in: namespace, name: m.name, icon: m.icon)
                encoder.append(ListInfo(summary: summary), requestID: requestID, to: &out)
            case .updateList(let m):
                let summary = try store.updateList(in: namespace, list: m.list, name: m.name, icon: m.icon)
                encoder.append(type: .listUpdated, requestID: requestID, to: &out) { ListInfo(summary: summary).encode(into: &$0) }
            case .deleteList(let m):
                let revision = try store.deleteList(in: namespace, list: m.list)
                encoder.append(ListDeleted(list: m.list, revision: revision), requestID: requestID, to: &out)
            case .getPage(let m):
                try page(m, namespace: namespace, requestID: requestID, into: &out, encoder: &encoder)
            case .patch(let m):
                let result = try store.patch(in: namespace, list: m.list, baseRevision: m.baseRevision, ops: m.ops,
                                             idempotencyKey: m.idempotencyKey)
                let ids = result.ids.map { PatchOK.Assignment(tempRef: $0.tempRef, id: $0.id) }
                encoder.append(PatchOK(list: m.list, revision: result.revision, ids: ids), requestID: requestID, to: &out)
            case .stats:
                encoder.append(metrics.report(), requestID: requestID, to: &out)
            case .subscribe, .unsubscribe, .changesSince:
                throw ChecklistError(.internalError, "\(request.type.name) is answered by the connection's live-sync session")
            case .export, .import:
                throw ChecklistError(.internalError, "\(request.type.name) is answered by the connection's snapshot session")
            }
        } catch let error as ChecklistError {
            encoder.append(ErrorMessage(error), requestID: requestID, to: &out)
        } catch {
            encoder.append(ErrorMessage(ChecklistError(.internalError, "\(error)")), requestID: requestID, to: &out)
        }
    }

    /// Encodes a PAGE straight from the store's row storage: text bytes go
    /// from the tree's arena into the output buffer, with no Item or String
    /// in between. Rows that would push the frame past `maxFrameBytes` are
    /// left for the next request (Protocol/SPEC.md section 6.7).
    private func page(_ m: GetPage, namespace: Namespace, requestID: UInt32,
                      into out: inout WireWriter, encoder: inout FrameEncoder) throws {
        let start: PageStart
        switch m.start {
        case .offset(let o): start = .offset(o)
        case .anchor(let id): start = .anchor(id)
        }
        let maxBody = Int(limits.maxFrameBytes) - Int(FrameHeader.minimumLength)
        try store.withPage(in: namespace, list: m.list, start: start, limit: Int(clamping: m.limit), filter: m.filter) { header, forEachRow in
            var count = header.count
            // Header fields take at most 5 varints of 10 bytes; a row at most
            // 10 (id) + 1 + 10 (length) + text + 20 (due, price).
            if 50 + count * (41 + Int(limits.maxTextBytes)) > maxBody {
                var size = 50
                var fitting = 0
                forEachRow { row in
                    size += 41 + row.textByteCount
                    if size <= maxBody { fitting += 1 }
                }
                count = fitting
            }
            let pageHeader = PageMessage.Header(list: m.list, revision: header.summary.revision, total: header.total,
                                                offset: header.offset, count: count)
            encoder.append(type: .page, requestID: requestID, to: &out) { w in
                pageHeader.encode(into: &w)
                var left = count
                forEachRow { row in
                    guard left > 0 else { return }
                    left -= 1
                    w.writeVarint(row.id.rawValue)
                    ItemFields.encode(checked: row.checked, remind: row.remind, due: row.due, price: row.price, into: &w) { w in
                        row.withTextBytes { w.writeBytes($0) }
                    }
                }
            }
        }
    }
}
