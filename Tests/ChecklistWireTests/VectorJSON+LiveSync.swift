import ChecklistModel
import ChecklistWire

/// The live-sync messages in the vectors' `fields` shape
/// (Protocol/vectors/README.md): SUBSCRIBE and UNSUBSCRIBE entries under
/// `lists`, a **ListChange** inlined (`list`, `revision`, `kind` and the
/// kind's fields), an **AppliedOp** as `{"op", "id", ...}`.
extension VectorJSON {
    // Codec → JSON ------------------------------------------------------------

    static func liveSyncJSON(_ request: Request) -> (message: String, fields: JSONValue)? {
        switch request {
        case .subscribe(let m):
            let lists: [JSONValue] = m.entries.map { entry in
                var o: [String: JSONValue] = ["list": .number(entry.list.rawValue)]
                if let revision = entry.revision { o["revision"] = .number(revision) }
                return .object(o)
            }
            return ("SUBSCRIBE", .object(["scope": .int(m.allLists ? 1 : 0), "lists": .array(lists)]))
        case .unsubscribe(let m):
            return ("UNSUBSCRIBE", .object(["scope": .int(m.everything ? 1 : 0),
                                            "lists": .array(m.lists.map { .number($0.rawValue) })]))
        case .changesSince(let m):
            return ("CHANGES_SINCE", .object(["list": .number(m.list.rawValue), "revision": .number(m.revision),
                                              "limit": .number(m.limit)]))
        default:
            return nil
        }
    }

    static func liveSyncJSON(_ message: ServerMessage) -> (message: String, fields: JSONValue)? {
        switch message {
        case .subscribed(let m):
            let lists: [JSONValue] = m.entries.map {
                .object(["list": .number($0.list.rawValue), "revision": .number($0.revision),
                         "status": .number(UInt64($0.status.rawValue))])
            }
            return ("SUBSCRIBED", .object(["lists": .array(lists)]))
        case .unsubscribed:
            return ("UNSUBSCRIBED", .object([:]))
        case .changes(let m):
            return ("CHANGES", .object(["list": .number(m.list.rawValue), "revision": .number(m.revision),
                                        "changes": .array(m.changes.map(json))]))
        case .changePush(let m):
            return ("CHANGE", json(m.change))
        case .subscriptionDropped(let m):
            return ("SUBSCRIPTION_DROPPED", .object(["reason": .number(UInt64(m.reason.rawValue)),
                                                     "message": .string(m.message)]))
        default:
            return nil
        }
    }

    static func json(_ c: ListChange) -> JSONValue {
        var o: [String: JSONValue] = ["list": .number(c.list.rawValue), "revision": .number(c.revision)]
        switch c.kind {
        case let .listCreated(name, icon):
            o["kind"] = .number(UInt64(ListChange.KindCode.listCreated.rawValue)); o["name"] = .string(name); o["icon"] = .string(icon)
        case let .listUpdated(name, icon):
            o["kind"] = .number(UInt64(ListChange.KindCode.listUpdated.rawValue)); o["name"] = .string(name); o["icon"] = .string(icon)
        case .listDeleted:
            o["kind"] = .number(UInt64(ListChange.KindCode.listDeleted.rawValue))
        case .patched(let ops):
            o["kind"] = .number(UInt64(ListChange.KindCode.patched.rawValue)); o["ops"] = .array(ops.map(json))
        case .omitted:
            o["kind"] = .number(UInt64(ListChange.KindCode.omitted.rawValue))
        }
        return .object(o)
    }

    static func json(_ op: AppliedOperation) -> JSONValue {
        func named(_ name: String, _ id: ItemID, _ extra: [String: JSONValue] = [:]) -> JSONValue {
            .object(extra.merging(["op": .string(name), "id": .number(id.rawValue)]) { a, _ in a })
        }
        switch op {
        case let .insert(id, index, fields):
            var o = fieldsObject(fields)
            o["op"] = .string("INSERT"); o["id"] = .number(id.rawValue); o["index"] = .number(index)
            return .object(o)
        case let .setText(id, text): return named("SET_TEXT", id, ["text": .string(text)])
        case let .setChecked(id, checked): return named("SET_CHECKED", id, ["checked": .bool(checked)])
        case let .setDue(id, due):
            return named("SET_DUE", id, due.map { ["present": .bool(true), "due": .number($0)] } ?? ["present": .bool(false)])
        case let .setRemind(id, remind): return named("SET_REMIND", id, ["remind": .bool(remind)])
        case let .setPrice(id, price):
            return named("SET_PRICE", id, price.map { ["present": .bool(true), "price": .number($0)] } ?? ["present": .bool(false)])
        case let .setKey(id, key):
            return named("SET_KEY", id, key.map { ["present": .bool(true), "clientKey": .string($0)] } ?? ["present": .bool(false)])
        case let .delete(id): return named("DELETE", id)
        case let .move(id, toIndex): return named("MOVE", id, ["toIndex": .number(toIndex)])
        }
    }

    // JSON → codec ------------------------------------------------------------

    static func liveSyncRequest(message: String, fields f: JSONValue) throws -> Request? {
        switch message {
        case "SUBSCRIBE":
            let entries = try f.array("lists").map { e in
                Subscribe.Entry(list: ListID(try e.uint("list")), revision: try e.optionalUInt("revision"))
            }
            return .subscribe(Subscribe(allLists: try scope(f), entries: entries))
        case "UNSUBSCRIBE":
            let lists = try f.array("lists").map { v -> ListID in
                guard case .int(let n) = v, n > 0 else { throw VectorMappingError("a list id: \(v)") }
                return ListID(UInt64(n))
            }
            return .unsubscribe(Unsubscribe(everything: try scope(f), lists: lists))
        case "CHANGES_SINCE":
            return .changesSince(ChangesSince(list: ListID(try f.uint("list")), revision: try f.uint("revision"),
                                              limit: try f.uint("limit")))
        default:
            return nil
        }
    }

    static func liveSyncServerMessage(message: String, fields f: JSONValue) throws -> ServerMessage? {
        switch message {
        case "SUBSCRIBED":
            let entries = try f.array("lists").map { e in
                guard let status = Subscribed.Status(rawValue: UInt8(try e.uint("status"))) else {
                    throw VectorMappingError("status")
                }
                return Subscribed.Entry(list: ListID(try e.uint("list")), revision: try e.uint("revision"), status: status)
            }
            return .subscribed(Subscribed(entries: entries))
        case "UNSUBSCRIBED":
            return .unsubscribed(Unsubscribed())
        case "CHANGES":
            return .changes(Changes(list: ListID(try f.uint("list")), revision: try f.uint("revision"),
                                    changes: try f.array("changes").map(listChange)))
        case "CHANGE":
            return .changePush(ChangePush(try listChange(f)))
        case "SUBSCRIPTION_DROPPED":
            return .subscriptionDropped(SubscriptionDropped(reason: .init(rawValue: UInt8(try f.uint("reason"))),
                                                            message: try f.string("message")))
        default:
            return nil
        }
    }

    private static func scope(_ f: JSONValue) throws -> Bool {
        switch try f.uint("scope") {
        case 0: return false
        case 1: return true
        case let s: throw VectorMappingError("scope \(s)")
        }
    }

    static func listChange(_ f: JSONValue) throws -> ListChange {
        let kind: ListChange.Kind
        switch ListChange.KindCode(rawValue: UInt8(try f.uint("kind"))) {
        case .listCreated?: kind = .listCreated(name: try f.string("name"), icon: try f.string("icon"))
        case .listUpdated?: kind = .listUpdated(name: try f.string("name"), icon: try f.string("icon"))
        case .listDeleted?: kind = .listDeleted
        case .patched?: kind = .patched(try f.array("ops").map(appliedOperation))
        case .omitted?: kind = .omitted
        case nil: throw VectorMappingError("kind")
        }
        return ListChange(list: ListID(try f.uint("list")), revision: try f.uint("revision"), kind: kind)
    }

    static func appliedOperation(_ f: JSONValue) throws -> AppliedOperation {
        let id = ItemID(try f.uint("id"))
        switch try f.string("op") {
        case "INSERT": return .insert(id: id, index: try f.uint("index"), fields: try itemFields(f))
        case "SET_TEXT": return .setText(id, try f.string("text"))
        case "SET_CHECKED": return .setChecked(id, try f.bool("checked"))
        case "SET_DUE": return .setDue(id, try f.bool("present") ? try f.int("due") : nil)
        case "SET_REMIND": return .setRemind(id, try f.bool("remind"))
        case "SET_PRICE": return .setPrice(id, try f.bool("present") ? try f.int("price") : nil)
        case "SET_KEY": return .setKey(id, try f.bool("present") ? try f.string("clientKey") : nil)
        case "DELETE": return .delete(id)
        case "MOVE": return .move(id, toIndex: try f.uint("toIndex"))
        case let name: throw VectorMappingError("no applied operation named \(name)")
        }
    }
}
