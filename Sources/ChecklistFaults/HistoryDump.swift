import ChecklistModel
import ChecklistWire

/// The history as text, one event a line in time order, for reading a
/// violation's surroundings (`checklist-faults --history FILE`).
public enum HistoryDump {
    public static func lines(_ history: History) -> [String] {
        var events: [(UInt64, Int, String)] = []
        for op in history.operations {
            let call: String
            switch op.call {
            case .patch(let p):
                call = "patch key \(p.key) #\(p.attempt) list \(p.list)\(p.baseRevision.map { " base \($0)" } ?? "") \(Describe.sent(p.ops))"
            case let .page(list, offset, limit): call = "page list \(list) offset \(offset) limit \(limit)"
            case let .changes(list, since, limit): call = "changes list \(list) since \(since) limit \(limit)"
            }
            events.append((op.invokedAt, 0, "client \(op.client) node \(op.node) op \(op.id) invoke \(call)"))
            let outcome: String
            switch op.outcome {
            case .pending: continue
            case let .patchOK(revision, ids): outcome = "ok revision \(revision) ids \(ids.map { "\($0.tempRef)=\($0.id)" })"
            case .page(let page): outcome = "ok PAGE revision \(page.header.revision) total \(page.header.total) offset \(page.header.offset) rows \(page.rows.map { "\($0.id):\($0.text)\($0.checked ? "+" : "")" })"
            case .changes(let c): outcome = "ok CHANGES revision \(c.revision) \(c.changes.map { "\($0.revision)" })"
            case let .failed(code, revision, message): outcome = "error \(ChecklistError.Code(rawValue: code))\(revision.map { " revision \($0)" } ?? "") \(message)"
            case .indeterminate(let why): outcome = "lost \(why)"
            }
            events.append((op.completedAt ?? op.invokedAt, 1, "client \(op.client) node \(op.node) op \(op.id) \(outcome)"))
        }
        for s in history.subscriptions {
            events.append((s.at, 2, "subscriber \(s.subscriber) session \(s.session) node \(s.node) subscribed list \(s.list) asked \(s.asked.map(String.init) ?? "-") reported \(s.reported) status \(s.status)"))
        }
        for d in history.deliveries {
            events.append((d.at, 3, "subscriber \(d.subscriber) session \(d.session) node \(d.node) given list \(d.change.list) \(Describe.change(d.change))"))
        }
        for f in history.faults {
            events.append((f.startedAt, 4, "nemesis \(f.kind.rawValue) node \(f.node.map(String.init) ?? "-") start"))
            if let healed = f.healedAt {
                events.append((healed, 4, "nemesis \(f.kind.rawValue) node \(f.node.map(String.init) ?? "-") healed\(f.note.map { ": \($0)" } ?? "")"))
            }
        }
        return events.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }
            .map { "\(Checker.seconds($0.element.0)) \($0.element.2)" }
    }
}
