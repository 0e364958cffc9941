import ChecklistClient
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
    case stats
    /// Lists to watch (none: every list), from a revision (one list only), stopping after `count` changes.
    case watch([ListRef], from: Revision?, count: Int?)
    /// Saves lists (none: every list) to a file.
    case export(file: String, lists: [ListRef], format: TransferFormat)
    /// Loads a file's lists.
    case `import`(file: String, replace: Bool, name: String?)
}

/// Bad command line: exit status 2. `command` selects the usage line shown.
struct UsageError: Error {
    let message: String
    let command: CommandSpec?
}

extension Command {
    /// Checks `parsed` against `spec` and converts its values.
    init(_ spec: CommandSpec, _ parsed: ParsedArguments) throws(UsageError) {
        func fail(_ message: String) -> UsageError { UsageError(message: message, command: spec) }

        for name in parsed.options.keys.sorted() where spec.option(named: name) == nil {
            throw fail("command '\(spec.name)' has no option \(name)")
        }
        let arguments = parsed.positionals
        // `[X]` is optional; a last argument `[X]...` takes any number.
        let required = spec.arguments.filter { !$0.hasPrefix("[") }.count
        let variadic = spec.arguments.last?.hasSuffix("...") ?? false
        if arguments.count < required {
            throw fail("missing argument \(spec.arguments[arguments.count])")
        }
        if arguments.count > spec.arguments.count && !variadic {
            throw fail("unexpected argument '\(arguments[spec.arguments.count])' (quote a TEXT or NAME with spaces)")
        }

        func list(_ index: Int) throws(UsageError) -> ListRef {
            let text = arguments[index]
            if Values.unsigned(text) != nil {
                guard let id = Values.id(text) else { throw fail("bad LIST '\(text)': list ids start at 1") }
                return .id(ListID(id))
            }
            guard !text.isEmpty else { throw fail("LIST must be a list id or a list name, not empty") }
            return .name(text)
        }
        func item(_ index: Int) throws(UsageError) -> ItemID {
            guard let id = Values.id(arguments[index]) else {
                throw fail("bad ITEM '\(arguments[index])': an item id is a number from 1 (see 'checklist show LIST')")
            }
            return ItemID(id)
        }
        func option<T>(_ name: String, _ what: String, _ parse: (String) -> T?) throws(UsageError) -> T? {
            guard let text = parsed.options[name] else { return nil }
            guard let value = parse(text) else { throw fail("bad value '\(text)' for \(name): expected \(what)") }
            return value
        }

        switch spec.name {
        case "lists":
            self = .lists
        case "create":
            self = .create(name: arguments[0], icon: parsed.options["--icon"] ?? "No Icon")
        case "rename":
            self = .rename(try list(0), name: arguments[1])
        case "icon":
            self = .icon(try list(0), icon: arguments[1])
        case "delete":
            self = .delete(try list(0))
        case "show":
            let offset = try option("--offset", "a row number from 0", Values.unsigned) ?? 0
            let limit = try option("--limit", "a number from 1", { Values.id($0).flatMap { Int(exactly: $0) } }) ?? 50
            let filter = try option("--filter", "all, checked or unchecked", Self.filter) ?? .all
            self = .show(try list(0), offset: offset, limit: limit, filter: filter)
        case "add":
            let at = try option("--at", "a row index from 0", Values.unsigned)
            let due = try option("--due", "a date YYYY-MM-DD", Values.date)
            let price = try option("--price", "an amount like 3.50 (at most 2 decimals)", Values.price)
            self = .add(try list(0), ItemFields(text: arguments[1], due: due, price: price), at: at)
        case "check":
            self = .change(try list(0), try item(1), .check)
        case "uncheck":
            self = .change(try list(0), try item(1), .uncheck)
        case "toggle":
            self = .change(try list(0), try item(1), .toggle)
        case "edit":
            self = .change(try list(0), try item(1), .setText(arguments[2]))
        case "remove":
            self = .change(try list(0), try item(1), .remove)
        case "move":
            guard let index = Values.unsigned(arguments[2]) else {
                throw fail("bad INDEX '\(arguments[2])': expected a row index from 0")
            }
            self = .change(try list(0), try item(1), .move(toIndex: index))
        case "ping":
            self = .ping
        case "stats":
            self = .stats
        case "watch":
            let from = try option("--from", "a revision", Values.unsigned)
            if from != nil && arguments.count != 1 { throw fail("--from needs exactly one LIST") }
            let count = try option("--count", "a number from 1", { Values.id($0).flatMap { Int(exactly: $0) } })
            self = .watch(try arguments.indices.map(list), from: from, count: count)
        case "export":
            let format = try option("--format", "snapshot, json, plist or keyed-archive", { TransferFormat(rawValue: $0) }) ?? .snapshot
            var lists: [ListRef] = []
            for text in parsed.repeated["--list"] ?? [] {
                if Values.unsigned(text) != nil {
                    guard let id = Values.id(text) else { throw fail("bad LIST '\(text)': list ids start at 1") }
                    lists.append(.id(ListID(id)))
                } else {
                    guard !text.isEmpty else { throw fail("--list needs a list id or a list name") }
                    lists.append(.name(text))
                }
            }
            self = .export(file: arguments[0], lists: lists, format: format)
        case "import":
            let name = parsed.options["--name"]
            if let name, name.isEmpty { throw fail("--name needs a list name") }
            self = .import(file: arguments[0], replace: parsed.options["--replace"] != nil, name: name)
        default:
            throw UsageError(message: "unknown command '\(spec.name)'", command: nil)
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
