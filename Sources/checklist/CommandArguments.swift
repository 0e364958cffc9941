import ChecklistClient
import ChecklistCommandLine

/// One command's arguments, parsed against its `CommandSpec` (known
/// options, the number of positionals), read with conversions that fail
/// with a `UsageError` carrying the command's usage.
struct CommandArguments {
    let parsed: ParsedCommandLine

    /// The command's name.
    var name: String { parsed.command.name }

    /// The number of positional arguments.
    var count: Int { parsed.positionals.count }

    /// The positional argument at `index` (checked present by the parser).
    subscript(index: Int) -> String { parsed.positionals[index] }

    func fail(_ message: String) -> UsageError { parsed.error(message) }

    /// The positional at `index` as a LIST.
    func list(_ index: Int) throws(UsageError) -> ListRef {
        try listRef(self[index], empty: "LIST must be a list id or a list name, not empty")
    }

    /// `text` as a list: by id when it is all digits, else by name.
    func listRef(_ text: String, empty: String) throws(UsageError) -> ListRef {
        if Values.unsigned(text) != nil {
            guard let id = Values.id(text) else { throw fail("bad LIST '\(text)': list ids start at 1") }
            return .id(ListID(id))
        }
        guard !text.isEmpty else { throw fail(empty) }
        return .name(text)
    }

    /// The positional at `index` as an ITEM id.
    func item(_ index: Int) throws(UsageError) -> ItemID {
        guard let id = Values.id(self[index]) else {
            throw fail("bad ITEM '\(self[index])': an item id is a number from 1 (see 'checklist show LIST')")
        }
        return ItemID(id)
    }

    /// The value of option `name` converted by `parse`, nil when absent.
    func option<T>(_ name: String, _ what: String, _ parse: (String) -> T?) throws(UsageError) -> T? {
        guard let text = parsed.string(name) else { return nil }
        guard let value = parse(text) else { throw fail("bad value '\(text)' for \(name): expected \(what)") }
        return value
    }
}
