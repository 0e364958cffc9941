import ChecklistModel
import ChecklistWire

/// A JSON value as the golden vectors hold it (Protocol/vectors/README.md).
/// Numbers are integers: the vectors hold no fractions in `fields`.
enum JSONValue: Hashable, Sendable, Decodable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)  // only for values above Int64.max
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? c.decode(Int64.self) {
            self = .int(i)
        } else if let u = try? c.decode(UInt64.self) {
            self = .uint(u)
        } else if let d = try? c.decode(Double.self) {
            self = .double(d)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }

    /// An unsigned wire value, in the canonical case for its size.
    static func number(_ v: UInt64) -> JSONValue {
        v <= UInt64(Int64.max) ? .int(Int64(v)) : .uint(v)
    }

    static func number(_ v: Int64) -> JSONValue { .int(v) }

    subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    /// Compact JSON with sorted keys, for failure messages.
    var description: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .uint(let u): return String(u)
        case .double(let d): return String(d)
        case .string(let s): return "\"" + s + "\""
        case .array(let a): return "[" + a.map(\.description).joined(separator: ",") + "]"
        case .object(let o):
            return "{" + o.keys.sorted().map { "\"\($0)\":\(o[$0]!.description)" }.joined(separator: ",") + "}"
        }
    }
}

struct VectorMappingError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

// MARK: - Reading fields

extension JSONValue {
    func value(_ key: String) throws -> JSONValue {
        guard let v = self[key] else { throw VectorMappingError("missing key \(key) in \(self)") }
        return v
    }

    func uint(_ key: String) throws -> UInt64 {
        switch try value(key) {
        case .int(let i) where i >= 0: return UInt64(i)
        case .uint(let u): return u
        case let v: throw VectorMappingError("\(key) is not an unsigned integer: \(v)")
        }
    }

    func optionalUInt(_ key: String) throws -> UInt64? { self[key] == nil ? nil : try uint(key) }

    func int(_ key: String) throws -> Int64 {
        guard case .int(let i) = try value(key) else { throw VectorMappingError("\(key) is not an Int64") }
        return i
    }

    func optionalInt(_ key: String) throws -> Int64? { self[key] == nil ? nil : try int(key) }

    func bool(_ key: String) throws -> Bool {
        guard case .bool(let b) = try value(key) else { throw VectorMappingError("\(key) is not a bool") }
        return b
    }

    func string(_ key: String) throws -> String {
        guard case .string(let s) = try value(key) else { throw VectorMappingError("\(key) is not a string") }
        return s
    }

    func optionalString(_ key: String) throws -> String? { self[key] == nil ? nil : try string(key) }

    func array(_ key: String) throws -> [JSONValue] {
        guard case .array(let a) = try value(key) else { throw VectorMappingError("\(key) is not an array") }
        return a
    }

    func hexBytes(_ key: String) throws -> [UInt8] {
        guard let bytes = [UInt8](hex: try string(key)) else { throw VectorMappingError("\(key) is not hex") }
        return bytes
    }
}

extension Array where Element == UInt8 {
    init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let hi = Self.nibble(digits[i]), let lo = Self.nibble(digits[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        self = out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(count * 2)
        for b in self {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

// MARK: - The mapping between codec values and the vectors' `fields`

/// Converts decoded messages to the JSON shape of the vectors' `fields`
/// (Protocol/vectors/README.md) and back. The switches over `Request` and
/// `ServerMessage` are exhaustive: a new message case does not compile until
/// it has a mapping (and then `everyMessageTypeHasAVector` wants a vector).
enum VectorJSON {
    // Codec → JSON ------------------------------------------------------------

    static func json(_ request: Request) -> (message: String, fields: JSONValue) {
        switch request {
        case .hello(let m):
            var o: [String: JSONValue] = ["minVersion": .number(m.minVersion), "maxVersion": .number(m.maxVersion),
                                          "features": .number(m.features.rawValue), "clientName": .string(m.clientName)]
            if let token = m.token { o["token"] = .string(token) }
            return ("HELLO", .object(o))
        case .ping(let m):
            return ("PING", .object(["data": .string(m.data.hex)]))
        case .listLists:
            return ("LIST_LISTS", .object([:]))
        case .createList(let m):
            return ("CREATE_LIST", .object(["name": .string(m.name), "icon": .string(m.icon)]))
        case .updateList(let m):
            var o: [String: JSONValue] = ["list": .number(m.list.rawValue)]
            if let name = m.name { o["name"] = .string(name) }
            if let icon = m.icon { o["icon"] = .string(icon) }
            return ("UPDATE_LIST", .object(o))
        case .deleteList(let m):
            return ("DELETE_LIST", .object(["list": .number(m.list.rawValue)]))
        case .getPage(let m):
            let (kind, start): (UInt64, JSONValue)
            switch m.start {
            case .offset(let o): (kind, start) = (0, .number(o))
            case .anchor(let id): (kind, start) = (1, .number(id.rawValue))
            case .key(let key): (kind, start) = (2, .string(key))
            }
            return ("GET_PAGE", .object(["list": .number(m.list.rawValue), "filter": .number(UInt64(m.filter.rawValue)),
                                         "startKind": .number(kind), "start": start,
                                         "limit": .number(m.limit)]))
        case .patch(let m):
            var o: [String: JSONValue] = ["list": .number(m.list.rawValue), "ops": .array(m.ops.map(json))]
            if let base = m.baseRevision { o["baseRevision"] = .number(base) }
            if let key = m.idempotencyKey { o["client"] = .number(key.client); o["sequence"] = .number(key.sequence) }
            return ("PATCH", .object(o))
        case .stats(let m):
            return ("STATS", .object(m.options.isEmpty ? [:] : ["options": .number(UInt64(m.options.rawValue))]))
        case .subscribe, .unsubscribe, .changesSince:
            return liveSyncJSON(request)!
        case .export, .import:
            return snapshotJSON(request)!
        }
    }

    static func json(_ message: ServerMessage) -> (message: String, fields: JSONValue) {
        switch message {
        case .helloOK(let m):
            return ("HELLO_OK", .object([
                "version": .number(m.version), "features": .number(m.features.rawValue),
                "serverName": .string(m.serverName),
                "maxFrameBytes": .number(UInt64(m.limits.maxFrameBytes)),
                "maxPageRows": .number(UInt64(m.limits.maxPageRows)),
                "maxTextBytes": .number(UInt64(m.limits.maxTextBytes)),
                "maxBatchOps": .number(UInt64(m.limits.maxBatchOps)),
            ]))
        case .pong(let m):
            return ("PONG", .object(["data": .string(m.data.hex)]))
        case .lists(let m):
            return ("LISTS", .object(["lists": .array(m.lists.map(json))]))
        case .listCreated(let m), .listUpdated(let m):
            return ("LIST", json(m.summary))
        case .listDeleted(let m):
            return ("LIST_DELETED", .object(["list": .number(m.list.rawValue), "revision": .number(m.revision)]))
        case .page(let m):
            let rows: [JSONValue] = m.rows.map { row in
                var o = fieldsObject(row.fields)
                o["id"] = .number(row.id.rawValue)
                return .object(o)
            }
            return ("PAGE", .object(["list": .number(m.header.list.rawValue), "revision": .number(m.header.revision),
                                     "total": .number(m.header.total), "offset": .number(m.header.offset),
                                     "rows": .array(rows)]))
        case .patchOK(let m):
            let pairs: [JSONValue] = m.ids.map { .object(["tempRef": .number($0.tempRef), "id": .number($0.id.rawValue)]) }
            return ("PATCH_OK", .object(["list": .number(m.list.rawValue), "revision": .number(m.revision),
                                         "pairs": .array(pairs)]))
        case .statsReport(let m):
            return ("STATS_REPORT", json(m))
        case .subscribed, .unsubscribed, .changes, .changePush, .subscriptionDropped:
            return liveSyncJSON(message)!
        case .exportChunk, .importOK:
            return snapshotJSON(message)!
        case .error(let m):
            var o: [String: JSONValue] = ["code": .number(UInt64(m.error.code.rawValue)),
                                          "message": .string(m.error.message)]
            if let field = m.error.field { o["field"] = .string(field) }
            if let revision = m.error.revision { o["revision"] = .number(revision) }
            if let retryAfter = m.error.retryAfterMilliseconds { o["retryAfterMs"] = .number(retryAfter) }
            return ("ERROR", .object(o))
        }
    }

    static func json(_ s: ListSummary) -> JSONValue {
        .object(["id": .number(s.id.rawValue), "name": .string(s.name), "icon": .string(s.icon),
                 "itemCount": .number(s.itemCount), "uncheckedCount": .number(s.uncheckedCount),
                 "revision": .number(s.revision)])
    }

    /// **ItemFields** are inlined in INSERT operations and PAGE rows.
    static func fieldsObject(_ f: ItemFields) -> [String: JSONValue] {
        var o: [String: JSONValue] = ["text": .string(f.text), "checked": .bool(f.checked), "remind": .bool(f.remind)]
        if let due = f.due { o["due"] = .number(due) }
        if let price = f.price { o["price"] = .number(price) }
        if let key = f.clientKey { o["clientKey"] = .string(key) }
        return o
    }

    static func json(_ ref: ItemRef) -> JSONValue {
        switch ref {
        case .id(let id): return .object(["id": .number(id.rawValue)])
        case .temp(let t): return .object(["tempRef": .number(t)])
        }
    }

    static func json(_ op: PatchOperation) -> JSONValue {
        func withRef(_ name: String, _ ref: ItemRef, _ extra: [String: JSONValue] = [:]) -> JSONValue {
            .object(extra.merging(["op": .string(name), "ref": json(ref)]) { a, _ in a })
        }
        switch op {
        case let .insert(tempRef, position, fields):
            var o = fieldsObject(fields)
            o["op"] = .string("INSERT")
            o["tempRef"] = .number(tempRef ?? 0)
            switch position {
            case .index(let i): o["where"] = .int(0); o["index"] = .number(i)
            case .after(let ref): o["where"] = .int(1); o["after"] = json(ref)
            case .end: o["where"] = .int(2)
            }
            return .object(o)
        case let .setText(ref, text): return withRef("SET_TEXT", ref, ["text": .string(text)])
        case let .setChecked(ref, checked): return withRef("SET_CHECKED", ref, ["checked": .bool(checked)])
        case let .toggle(ref): return withRef("TOGGLE", ref)
        case let .setDue(ref, due):
            return withRef("SET_DUE", ref, due.map { ["present": .bool(true), "due": .number($0)] } ?? ["present": .bool(false)])
        case let .setRemind(ref, remind): return withRef("SET_REMIND", ref, ["remind": .bool(remind)])
        case let .setPrice(ref, price):
            return withRef("SET_PRICE", ref, price.map { ["present": .bool(true), "price": .number($0)] } ?? ["present": .bool(false)])
        case let .setKey(ref, key):
            return withRef("SET_KEY", ref, key.map { ["present": .bool(true), "clientKey": .string($0)] } ?? ["present": .bool(false)])
        case let .delete(ref): return withRef("DELETE", ref)
        case let .move(ref, toIndex): return withRef("MOVE", ref, ["toIndex": .number(toIndex)])
        }
    }

    // JSON → codec ------------------------------------------------------------

    static func request(message: String, fields f: JSONValue) throws -> Request {
        switch message {
        case "HELLO":
            return .hello(Hello(minVersion: try f.uint("minVersion"), maxVersion: try f.uint("maxVersion"),
                                features: Features(rawValue: try f.uint("features")),
                                clientName: try f.string("clientName"), token: try f.optionalString("token")))
        case "PING": return .ping(Ping(data: try f.hexBytes("data")))
        case "LIST_LISTS": return .listLists(ListLists())
        case "CREATE_LIST": return .createList(CreateList(name: try f.string("name"), icon: try f.string("icon")))
        case "UPDATE_LIST":
            return .updateList(UpdateList(list: ListID(try f.uint("list")), name: try f.optionalString("name"),
                                          icon: try f.optionalString("icon")))
        case "DELETE_LIST": return .deleteList(DeleteList(list: ListID(try f.uint("list"))))
        case "GET_PAGE":
            guard let filter = RowFilter(rawValue: UInt8(try f.uint("filter"))) else { throw VectorMappingError("filter") }
            let start: PageStart
            switch try f.uint("startKind") {
            case 0: start = .offset(try f.uint("start"))
            case 1: start = .anchor(ItemID(try f.uint("start")))
            case 2: start = .key(try f.string("start"))
            case let k: throw VectorMappingError("startKind \(k)")
            }
            return .getPage(GetPage(list: ListID(try f.uint("list")), filter: filter, start: start, limit: try f.uint("limit")))
        case "PATCH":
            let key = try f.optionalUInt("client").map { IdempotencyKey(client: $0, sequence: try f.uint("sequence")) }
            return .patch(Patch(list: ListID(try f.uint("list")), baseRevision: try f.optionalUInt("baseRevision"),
                                idempotencyKey: key, ops: try f.array("ops").map(operation)))
        case "STATS":
            return .stats(Stats(options: Stats.Options(rawValue: UInt8(try f.optionalUInt("options") ?? 0))))
        case "SUBSCRIBE", "UNSUBSCRIBE", "CHANGES_SINCE":
            return try liveSyncRequest(message: message, fields: f)!
        case "EXPORT", "IMPORT":
            return try snapshotRequest(message: message, fields: f)!
        default:
            throw VectorMappingError("no request named \(message)")
        }
    }

    static func serverMessage(message: String, type: UInt8, fields f: JSONValue) throws -> ServerMessage {
        switch message {
        case "HELLO_OK":
            let limits = Limits(maxFrameBytes: UInt32(try f.uint("maxFrameBytes")),
                                maxPageRows: UInt32(try f.uint("maxPageRows")),
                                maxTextBytes: UInt32(try f.uint("maxTextBytes")),
                                maxBatchOps: UInt32(try f.uint("maxBatchOps")))
            return .helloOK(HelloOK(version: try f.uint("version"), features: Features(rawValue: try f.uint("features")),
                                    serverName: try f.string("serverName"), limits: limits))
        case "PONG": return .pong(Pong(data: try f.hexBytes("data")))
        case "LISTS": return .lists(Lists(lists: try f.array("lists").map(summary)))
        case "LIST":
            let info = ListInfo(summary: try summary(f))
            switch MessageType(rawValue: type) {
            case .listCreated: return .listCreated(info)
            case .listUpdated: return .listUpdated(info)
            default: throw VectorMappingError("LIST travels as 0x91 or 0x92, not \(type)")
            }
        case "LIST_DELETED":
            return .listDeleted(ListDeleted(list: ListID(try f.uint("list")), revision: try f.uint("revision")))
        case "PAGE":
            let rows = try f.array("rows").map { row in Item(id: ItemID(try row.uint("id")), fields: try itemFields(row)) }
            return .page(PageMessage(list: ListID(try f.uint("list")), revision: try f.uint("revision"),
                                     total: try f.uint("total"), offset: try f.uint("offset"), rows: rows))
        case "PATCH_OK":
            let pairs = try f.array("pairs").map { p in
                PatchOK.Assignment(tempRef: try p.uint("tempRef"), id: ItemID(try p.uint("id")))
            }
            return .patchOK(PatchOK(list: ListID(try f.uint("list")), revision: try f.uint("revision"), ids: pairs))
        case "ERROR":
            let code = ChecklistError.Code(rawValue: UInt16(try f.uint("code")))
            return .error(ErrorMessage(ChecklistError(code, try f.string("message"), field: try f.optionalString("field"),
                                                      revision: try f.optionalUInt("revision"),
                                                      retryAfterMilliseconds: try f.optionalUInt("retryAfterMs"))))
        case "STATS_REPORT": return .statsReport(try statsReport(f))
        case "SUBSCRIBED", "UNSUBSCRIBED", "CHANGES", "CHANGE", "SUBSCRIPTION_DROPPED":
            return try liveSyncServerMessage(message: message, fields: f)!
        case "EXPORT_CHUNK", "IMPORT_OK":
            return try snapshotServerMessage(message: message, fields: f)!
        default:
            throw VectorMappingError("no server message named \(message)")
        }
    }

    static func summary(_ f: JSONValue) throws -> ListSummary {
        ListSummary(id: ListID(try f.uint("id")), name: try f.string("name"), icon: try f.string("icon"),
                    itemCount: try f.uint("itemCount"), uncheckedCount: try f.uint("uncheckedCount"),
                    revision: try f.uint("revision"))
    }

    static func itemFields(_ f: JSONValue) throws -> ItemFields {
        ItemFields(text: try f.string("text"), checked: try f.bool("checked"), due: try f.optionalInt("due"),
                   remind: try f.bool("remind"), price: try f.optionalInt("price"),
                   clientKey: try f.optionalString("clientKey"))
    }

    static func ref(_ f: JSONValue) throws -> ItemRef {
        if f["id"] != nil { return .id(ItemID(try f.uint("id"))) }
        return .temp(try f.uint("tempRef"))
    }

    static func operation(_ f: JSONValue) throws -> PatchOperation {
        let name = try f.string("op")
        if name == "INSERT" {
            let position: InsertPosition
            switch try f.uint("where") {
            case 0: position = .index(try f.uint("index"))
            case 1: position = .after(try ref(try f.value("after")))
            case 2: position = .end
            case let w: throw VectorMappingError("where \(w)")
            }
            let temp = try f.uint("tempRef")
            return .insert(tempRef: temp == 0 ? nil : temp, position: position, fields: try itemFields(f))
        }
        let r = try ref(try f.value("ref"))
        switch name {
        case "SET_TEXT": return .setText(r, try f.string("text"))
        case "SET_CHECKED": return .setChecked(r, try f.bool("checked"))
        case "TOGGLE": return .toggle(r)
        case "SET_DUE": return .setDue(r, try f.bool("present") ? try f.int("due") : nil)
        case "SET_REMIND": return .setRemind(r, try f.bool("remind"))
        case "SET_PRICE": return .setPrice(r, try f.bool("present") ? try f.int("price") : nil)
        case "SET_KEY": return .setKey(r, try f.bool("present") ? try f.string("clientKey") : nil)
        case "DELETE": return .delete(r)
        case "MOVE": return .move(r, toIndex: try f.uint("toIndex"))
        default: throw VectorMappingError("no operation named \(name)")
        }
    }
}
