import ChecklistClient

/// One command's arguments, checked against its `CommandSpec` (known
/// options, the number of positionals) and read with conversions that fail
/// with a `UsageError` naming the command.
struct CommandArguments {
    let spec: CommandSpec
    let parsed: ParsedArguments

    /// Checks that every option is the command's and that the positionals
    /// fit its synopsis: `[X]` is optional, a last `[X]...` takes any number.
    init(_ spec: CommandSpec, _ parsed: ParsedArguments) throws(UsageError) {
        self.spec = spec
        self.parsed = parsed
        for name in parsed.options.keys.sorted() where spec.option(named: name) == nil {
            throw fail("command '\(spec.name)' has no option \(name)")
        }
        let arguments = parsed.positionals
        let required = spec.arguments.filter { !$0.hasPrefix("[") }.count
        let variadic = spec.arguments.last?.hasSuffix("...") ?? false
        if arguments.count < required {
            throw fail("missing argument \(spec.arguments[arguments.count])")
        }
        if arguments.count > spec.arguments.count && !variadic {
            throw fail("unexpected argument '\(arguments[spec.arguments.count])' (quote a TEXT or NAME with spaces)")
        }
    }

    /// The number of positional arguments.
    var count: Int { parsed.positionals.count }

    /// The positional argument at `index` (checked present by `init`).
    subscript(index: Int) -> String { parsed.positionals[index] }

    func fail(_ message: String) -> UsageError { UsageError(message: message, command: spec) }

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
        guard let text = parsed.options[name] else { return nil }
        guard let value = parse(text) else { throw fail("bad value '\(text)' for \(name): expected \(what)") }
        return value
    }
}
