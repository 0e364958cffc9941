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

    init(store: Store, serverName: String, limits: Limits) {
        self.store = store
        self.serverName = serverName
        self.limits = limits
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
                let result = try store.patch(in: namespace, list: m.list, baseRevision: m.baseRevision, ops: m.ops)
                let ids = result.ids.map { PatchOK.Assignment(tempRef: $0.tempRef, id: $0.id) }
                encoder.append(PatchOK(list: m.list, revision: result.revision, ids: ids), requestID: requestID, to: &out)
            }
        } catch let error as ChecklistError {
            encoder.append(ErrorMessage(error), requestID: requestID, to: &out)
        } catch {
            encoder.append(ErrorMessage(ChecklistError(.internalError, "\(error)")), requestID: requestID, to: &out)
        }
    }

    private func page(_ m: GetPage, namespace: Namespace, requestID: UInt32,
                      into out: inout WireWriter, encoder: inout FrameEncoder) throws {
        guard m.limit >= 1 else { throw ChecklistError.badField("limit", "limit must be at least 1") }
        guard m.limit <= UInt64(limits.maxPageRows) else {
            throw ChecklistError(.limitExceeded, "limit \(m.limit) exceeds maxPageRows \(limits.maxPageRows)", field: "limit")
        }
        let start: PageStart
        switch m.start {
        case .offset(let o): start = .offset(o)
        case .anchor(let id): start = .anchor(id)
        }
        let page = try store.page(in: namespace, list: m.list, start: start, limit: Int(m.limit), filter: m.filter)
        let message = PageMessage(list: m.list, revision: page.summary.revision, total: page.total,
                                  offset: page.offset, rows: page.items)
        encoder.append(message, requestID: requestID, to: &out)
    }
}
