import ChecklistClient

/// Something the server or the lookup said no to: exit status 1. The
/// message starts with a wire code name, like the server's errors.
struct LookupError: Error {
    let message: String
}

/// Runs one command on an open connection and returns what to print.
struct Runner {
    let connection: ChecklistConnection
    let json: Bool

    func run(_ command: Command) async throws -> String {
        switch command {
        case .lists:
            let lists = try await connection.lists()
            return json ? JSON.array(lists.map(JSON.summary)).rendered() : TextOutput.lists(lists)

        case .create(let name, let icon):
            let list = try await connection.createList(name: name, icon: icon)
            return json ? JSON.summary(list).rendered() : "Created " + TextOutput.summary(list) + "."

        case .rename(let ref, let name):
            let list = try await connection.updateList(try await resolve(ref), name: name)
            return json ? JSON.summary(list).rendered() : "Renamed " + TextOutput.summary(list) + "."

        case .icon(let ref, let icon):
            let list = try await connection.updateList(try await resolve(ref), icon: icon)
            return json ? JSON.summary(list).rendered() : "Changed the icon of " + TextOutput.summary(list) + "."

        case .delete(let ref):
            let id = try await resolve(ref)
            let revision = try await connection.deleteList(id)
            return json ? JSON.deleted(id, revision: revision).rendered() : "Deleted list \(id) (revision \(revision))."

        case .show(let ref, let offset, let limit, let filter):
            let (list, page) = try await show(ref, offset: offset, limit: limit, filter: filter)
            return json ? JSON.page(page, list: list).rendered() : TextOutput.page(page, list: list)

        case .add(let ref, let fields, let at):
            let id = try await resolve(ref)
            let insert = PatchOperation.insert(tempRef: 1, position: at.map { .index($0) } ?? .end, fields: fields)
            let ok = try await connection.patch(id, ops: [insert])
            if json { return JSON.patched(ok).rendered() }
            let newItem = ok.ids.first.map { "item \($0.id)" } ?? "an item"
            return "Added \(newItem) to list \(id) (revision \(ok.revision))."

        case .change(let ref, let item, let change):
            let id = try await resolve(ref)
            let ok = try await connection.patch(id, ops: [change.operation(on: item)])
            return json ? JSON.patched(ok).rendered() : "\(Self.describe(change, item)) in list \(id) (revision \(ok.revision))."

        case .ping:
            let rtt = try await connection.ping()
            let ms = Self.milliseconds(rtt)
            if json { return JSON.pong(milliseconds: ms).rendered() }
            return "pong from \(connection.serverName) (protocol \(connection.version)) in \(ms) ms"

        case .stats(let usage):
            let report = try await connection.stats(options: usage ? .usage : [])
            return json ? JSON.stats(report, askedUsage: usage).rendered() : TextOutput.stats(report, server: connection.serverName, askedUsage: usage)

        case .watch:
            throw LookupError(message: "BAD_STATE: watch runs on its own (main.swift), not through Runner")

        case .export(let file, let refs, let format):
            var ids: [ListID] = []
            for ref in refs { ids.append(try await resolve(ref)) }
            return try await Transfer(connection: connection, json: json).export(to: file, lists: ids, format: format)

        case .import(let file, let replace, let name):
            return try await Transfer(connection: connection, json: json).importFile(from: file, replace: replace, name: name)
        }
    }

    /// The list's summary and the rows asked for. With an id, the LIST_LISTS
    /// and the first GET_PAGE are pipelined on the connection. More rows than
    /// the server's `maxPageRows` are fetched page by page.
    private func show(_ ref: ListRef, offset: UInt64, limit: Int, filter: RowFilter) async throws -> (ListSummary, FetchedPage) {
        switch ref {
        case .id(let id):
            async let lists = connection.lists()
            async let rows = fetchRows(id, offset: offset, limit: limit, filter: filter)
            let page = try await rows
            guard let list = try await lists.first(where: { $0.id == id }) else {
                throw LookupError(message: "NOT_FOUND: list \(id) not found")
            }
            return (list, page)
        case .name(let name):
            let list = try Self.find(name, in: try await connection.lists())
            return (list, try await fetchRows(list.id, offset: offset, limit: limit, filter: filter))
        }
    }

    private func fetchRows(_ list: ListID, offset: UInt64, limit: Int, filter: RowFilter) async throws -> FetchedPage {
        let pageRows = max(1, Int(connection.serverLimits.maxPageRows))
        var page = try await connection.page(list, start: .offset(offset), limit: min(limit, pageRows), filter: filter)
        while page.items.count < limit && page.hasMore {
            let next = try await connection.page(list, start: .offset(page.endOffset),
                                                 limit: min(limit - page.items.count, pageRows), filter: filter)
            if next.items.isEmpty { break }
            page.items += next.items
            page.total = next.total
            page.revision = next.revision
        }
        return page
    }

    /// The id of `ref`; a name is looked up with LIST_LISTS and must match
    /// exactly one list.
    private func resolve(_ ref: ListRef) async throws -> ListID {
        switch ref {
        case .id(let id): return id
        case .name(let name): return try Self.find(name, in: try await connection.lists()).id
        }
    }

    private static func find(_ name: String, in lists: [ListSummary]) throws -> ListSummary {
        let matches = lists.filter { $0.name == name }
        guard let first = matches.first else {
            throw LookupError(message: "NOT_FOUND: no list named \(TextOutput.quoted(name))")
        }
        guard matches.count == 1 else {
            let ids = matches.map { String($0.id.rawValue) }.joined(separator: ", ")
            throw LookupError(message: "AMBIGUOUS: \(matches.count) lists are named \(TextOutput.quoted(name)) (ids \(ids)); use the list id")
        }
        return first
    }

    private static func describe(_ change: ItemChange, _ item: ItemID) -> String {
        switch change {
        case .check: return "Checked item \(item)"
        case .uncheck: return "Unchecked item \(item)"
        case .toggle: return "Toggled item \(item)"
        case .remove: return "Removed item \(item)"
        case .setText: return "Edited item \(item)"
        case .move(let index): return "Moved item \(item) to row \(index)"
        }
    }

    /// `0.213`: milliseconds with microsecond precision.
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let micros = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        let fraction = String(micros % 1000)
        return "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
