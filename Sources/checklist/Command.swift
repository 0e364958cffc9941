import ChecklistClient
import ChecklistCommandLine
import ChecklistTransfer

/// A list named on the command line: by id (all digits) or by exact name.
enum ListRef: Sendable {
    case id(ListID)
    case name(String)
}

/// The single-item changes, each one PATCH operation.
enum ItemChange: Sendable {
    case check, uncheck, toggle, remove
    case setText(String)
    case move(toIndex: UInt64)

    func operation(on item: ItemID) -> PatchOperation {
        switch self {
        case .check: return .setChecked(.id(item), true)
        case .uncheck: return .setChecked(.id(item), false)
        case .toggle: return .toggle(.id(item))
        case .remove: return .delete(.id(item))
        case .setText(let text): return .setText(.id(item), text)
        case .move(let index): return .move(.id(item), toIndex: index)
        }
    }
}

/// A command with every argument checked and converted, ready to run.
/// Building it needs no server, so usage errors never wait for a connection.
enum Command: Sendable {
    case lists
    case create(name: String, icon: String)
    case rename(ListRef, name: String)
    case icon(ListRef, icon: String)
    case delete(ListRef)
    case show(ListRef, offset: UInt64, limit: Int, filter: RowFilter)
    case add(ListRef, ItemFields, at: UInt64?)
    case change(ListRef, ItemID, ItemChange)
    case ping
    /// The server's figures; with `usage`, also the namespace's usage and quotas.
    case stats(usage: Bool)
    /// Lists to watch (none: every list), from a revision (one list only), stopping after `count` changes.
    case watch([ListRef], from: Revision?, count: Int?)
    /// Saves lists (none: every list) to a file.
    case export(file: String, lists: [ListRef], format: TransferFormat)
    /// Loads a file's lists.
    case `import`(file: String, replace: Bool, name: String?)
}

extension Command {
    /// Converts the values of `parsed`, a command line with a command.
    init(_ parsed: ParsedCommandLine) throws(UsageError) {
        let a = CommandArguments(parsed: parsed)
        if let command = try Self.listCommand(a) {
            self = command
        } else if let command = try Self.itemCommand(a) {
            self = command
        } else if let command = try Self.serverCommand(a) {
            self = command
        } else {
            throw a.fail("unknown command '\(a.name)'")
        }
    }

    /// The commands on whole lists, or nil for another command.
    private static func listCommand(_ a: CommandArguments) throws(UsageError) -> Command? {
        switch a.name {
        case "lists": return .lists
        case "create": return .create(name: a[0], icon: a.parsed.string("--icon") ?? "No Icon")
        case "rename": return .rename(try a.list(0), name: a[1])
        case "icon": return .icon(try a.list(0), icon: a[1])
        case "delete": return .delete(try a.list(0))
        case "show":
            let offset = try a.option("--offset", "a row number from 0", Values.unsigned) ?? 0
            let limit = try a.option("--limit", "a number from 1", Values.positiveInt) ?? 50
            let filter = try a.option("--filter", "all, checked or unchecked", Self.filter) ?? .all
            return .show(try a.list(0), offset: offset, limit: limit, filter: filter)
        default: return nil
        }
    }

    /// The commands on one item, or nil for another command.
    private static func itemCommand(_ a: CommandArguments) throws(UsageError) -> Command? {
        let change: ItemChange
        switch a.name {
        case "add":
            let at = try a.option("--at", "a row index from 0", Values.unsigned)
            let due = try a.option("--due", "a date YYYY-MM-DD", Values.date)
            let price = try a.option("--price", "an amount like 3.50 (at most 2 decimals)", Values.price)
            return .add(try a.list(0), ItemFields(text: a[1], due: due, price: price), at: at)
        case "check": change = .check
        case "uncheck": change = .uncheck
        case "toggle": change = .toggle
        case "edit": change = .setText(a[2])
        case "remove": change = .remove
        case "move":
            guard let index = Values.unsigned(a[2]) else {
                throw a.fail("bad INDEX '\(a[2])': expected a row index from 0")
            }
            change = .move(toIndex: index)
        default: return nil
        }
        return .change(try a.list(0), try a.item(1), change)
    }

    /// Server-wide commands: ping, stats, watch, export and import; nil for another command.
    private static func serverCommand(_ a: CommandArguments) throws(UsageError) -> Command? {
        switch a.name {
        case "ping": return .ping
        case "stats": return .stats(usage: a.parsed.flag("--usage"))
        case "watch":
            let from = try a.option("--from", "a revision", Values.unsigned)
            if from != nil && a.count != 1 { throw a.fail("--from needs exactly one LIST") }
            let count = try a.option("--count", "a number from 1", Values.positiveInt)
            var lists: [ListRef] = []
            for index in 0..<a.count { lists.append(try a.list(index)) }
            return .watch(lists, from: from, count: count)
        case "export":
            let format = try a.option("--format", "snapshot, json, plist or keyed-archive", { TransferFormat(rawValue: $0) }) ?? .snapshot
            var lists: [ListRef] = []
            for text in a.parsed.strings("--list") {
                lists.append(try a.listRef(text, empty: "--list needs a list id or a list name"))
            }
            return .export(file: a[0], lists: lists, format: format)
        case "import":
            let name = a.parsed.string("--name")
            if let name, name.isEmpty { throw a.fail("--name needs a list name") }
            return .import(file: a[0], replace: a.parsed.flag("--replace"), name: name)
        default: return nil
        }
    }

    private static func filter(_ text: String) -> RowFilter? {
        switch text {
        case "all": return .all
        case "checked": return .checked
        case "unchecked": return .unchecked
        default: return nil
        }
    }
}
