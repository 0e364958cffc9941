import ChecklistClient
#if canImport(Glibc)
import Glibc
#endif

/// `checklist watch [LIST]...`: prints the changes of the lists (of every
/// list without one) as they are committed, one line each, written and
/// flushed at once; reconnects and resumes where it was when the
/// connection is lost (on the next of several servers, saying so on
/// standard error). Runs until interrupted, until `--count` changes were
/// printed, or until every watched list is deleted.
struct Watch {
    let servers: [ServerAddress]
    let token: String?
    let tls: TLSClientConfiguration?
    let json: Bool

    func run(_ refs: [ListRef], from: Revision?, count: Int?) async -> Int32 {
        let first: ChecklistConnection
        let ids: [ListID]
        do {
            first = try await connect()
            ids = try await resolve(refs, on: first)
        } catch let error as ClientError {
            printError("checklist: \(error.code == .server ? error.description : error.message)")
            return error.code == .server ? ExitStatus.serverError : ExitStatus.unreachable
        } catch {
            return reportFailure(error)  // a LookupError or other failure: as for every command
        }
        // The subscription starts on the server that resolved the names.
        await first.close()
        let order = [first.server] + servers.filter { $0 != first.server }
        let sync = ChecklistSync(servers: order, clientName: "checklist-cli/1.0", token: token, timeout: .seconds(5),
                                 requestTimeout: .seconds(30), tls: tls, onReconnect: { reconnection in
            guard reconnection.isFailover else { return }
            printError("checklist: \(reconnection.from) went away; now on \(reconnection.to)")
        })
        let revisions = from.map { [ids[0]: $0] } ?? [:]
        var printed = 0
        var missing = false
        var announced = false
        for await event in sync.subscribe(ids, allLists: ids.isEmpty, from: revisions) {
            switch event {
            case .change(let change):
                writeLine(json ? JSON.change(change).compact() : Self.describe(change), to: 1)
                printed += 1
                if let count, printed >= count {
                    await sync.close()
                    return ExitStatus.success
                }
            case .resyncRequired(let list, let revision):
                writeLine(json ? JSON.resync(list, revision).compact()
                               : "list \(list) revision \(revision): changes were missed; run 'checklist show \(list)'", to: 1)
            case .listNotFound(let list):
                missing = true
                printError("checklist: NOT_FOUND: list \(list) not found")
            case .interrupted(let why):
                printError("checklist: \(why); resuming")
            case .subscribed(let lists):
                if !announced {
                    announced = true
                    let what = ids.isEmpty ? "every list (\(lists.count) now)" : "\(lists.count) list(s)"
                    printError("checklist: watching \(what)")
                }
            }
        }
        await sync.close()
        return missing ? ExitStatus.serverError : ExitStatus.success
    }

    private func connect() async throws -> ChecklistConnection {
        try await ChecklistConnection.connect(servers: servers, clientName: "checklist-cli/1.0", token: token,
                                              timeout: .seconds(5), requestTimeout: .seconds(30), tls: tls)
    }

    private func resolve(_ refs: [ListRef], on connection: ChecklistConnection) async throws -> [ListID] {
        var lists: [ListSummary]?
        var ids: [ListID] = []
        for ref in refs {
            switch ref {
            case .id(let id):
                ids.append(id)
            case .name(let name):
                if lists == nil { lists = try await connection.lists() }
                let matches = lists!.filter { $0.name == name }
                guard matches.count == 1 else {
                    throw LookupError(message: matches.isEmpty ? "NOT_FOUND: no list named \(TextOutput.quoted(name))"
                                                               : "AMBIGUOUS: \(matches.count) lists are named \(TextOutput.quoted(name)); use the list id")
                }
                ids.append(matches[0].id)
            }
        }
        return ids
    }

    // MARK: Text

    static func describe(_ change: ListChange) -> String {
        let head = "list \(change.list) revision \(change.revision): "
        switch change.kind {
        case let .listCreated(name, icon): return head + "created \(TextOutput.quoted(name)) (icon \(TextOutput.quoted(icon)))"
        case let .listUpdated(name, icon): return head + "now \(TextOutput.quoted(name)) (icon \(TextOutput.quoted(icon)))"
        case .listDeleted: return head + "deleted"
        case .omitted: return head + "changed (too large to show; run 'checklist show \(change.list)')"
        case .patched(let ops): return head + ops.map(describe).joined(separator: "; ")
        }
    }

    static func describe(_ op: AppliedOperation) -> String {
        switch op {
        case let .insert(id, index, fields):
            return "added item \(id) \(TextOutput.quoted(fields.text)) at row \(index)" + (fields.checked ? " (checked)" : "")
        case let .setText(id, text): return "item \(id) text \(TextOutput.quoted(text))"
        case let .setChecked(id, checked): return "\(checked ? "checked" : "unchecked") item \(id)"
        case let .setDue(id, due): return due.map { "item \(id) due \(Values.formatDate($0))" } ?? "item \(id) due date cleared"
        case let .setRemind(id, remind): return "item \(id) reminder \(remind ? "on" : "off")"
        case let .setPrice(id, price): return price.map { "item \(id) price \(Values.formatPrice($0))" } ?? "item \(id) price cleared"
        case let .setKey(id, key): return key.map { "item \(id) client key \(TextOutput.quoted($0))" } ?? "item \(id) client key cleared"
        case let .delete(id): return "removed item \(id)"
        case let .move(id, toIndex): return "moved item \(id) to row \(toIndex)"
        }
    }
}

/// `watch --json`: one object per change, on one line, with the protocol's
/// field names: `list`, `revision`, `kind` (`patched`, `created`, `updated`,
/// `deleted`, `omitted`, or `resync` when changes were missed), `ops` (the
/// operations as applied; empty for other kinds), and `name`, `icon` for
/// `created` and `updated`.
extension JSON {
    static func change(_ change: ListChange) -> JSON {
        var members: [(String, JSON)] = [("list", .uint(change.list.rawValue)), ("revision", .uint(change.revision))]
        var ops: [JSON] = []
        switch change.kind {
        case let .listCreated(name, icon):
            members += [("kind", .string("created")), ("name", .string(name)), ("icon", .string(icon))]
        case let .listUpdated(name, icon):
            members += [("kind", .string("updated")), ("name", .string(name)), ("icon", .string(icon))]
        case .listDeleted:
            members.append(("kind", .string("deleted")))
        case .omitted:
            members.append(("kind", .string("omitted")))
        case .patched(let applied):
            members.append(("kind", .string("patched")))
            ops = applied.map(operation)
        }
        members.append(("ops", .array(ops)))
        return .object(members)
    }

    static func resync(_ list: ListID, _ revision: Revision) -> JSON {
        .object([("list", .uint(list.rawValue)), ("revision", .uint(revision)), ("kind", .string("resync")), ("ops", .array([]))])
    }

    static func operation(_ op: AppliedOperation) -> JSON {
        func named(_ name: String, _ id: ItemID, _ rest: [(String, JSON)] = []) -> JSON {
            .object([("op", .string(name)), ("id", .uint(id.rawValue))] + rest)
        }
        switch op {
        case let .insert(id, index, f):
            return named("INSERT", id, [("index", .uint(index)), ("text", .string(f.text)), ("checked", .bool(f.checked)),
                                        ("due", f.due.map { .string(Values.formatDate($0)) } ?? .null),
                                        ("remind", .bool(f.remind)), ("price", f.price.map { .int($0) } ?? .null)])
        case let .setText(id, text): return named("SET_TEXT", id, [("text", .string(text))])
        case let .setChecked(id, checked): return named("SET_CHECKED", id, [("checked", .bool(checked))])
        case let .setDue(id, due): return named("SET_DUE", id, [("due", due.map { .string(Values.formatDate($0)) } ?? .null)])
        case let .setRemind(id, remind): return named("SET_REMIND", id, [("remind", .bool(remind))])
        case let .setPrice(id, price): return named("SET_PRICE", id, [("price", price.map { .int($0) } ?? .null)])
        case let .setKey(id, key): return named("SET_KEY", id, [("clientKey", key.map { .string($0) } ?? .null)])
        case let .delete(id): return named("DELETE", id)
        case let .move(id, toIndex): return named("MOVE", id, [("toIndex", .uint(toIndex))])
        }
    }
}
