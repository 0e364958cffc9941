/// Parses a command line against a `CommandSpec`.
///
/// The rules, the same for every tool:
/// - options may stand before or after the positional arguments, and a
///   command's global options before or after its subcommand's name;
/// - `--name value` and `--name=value`; a flag takes no value;
/// - `--` ends the options (`-` alone and negative numbers are positionals);
/// - `-h` or `--help` anywhere before `--` asks for help (of the
///   subcommand, when one is named), whatever else is wrong; so does
///   `help [SUBCOMMAND]` as the first argument of a command with
///   subcommands or without positional arguments;
/// - otherwise the first problem is thrown as a `UsageError` with the
///   usage lines of the command concerned.
public enum CommandLineParser {
    public static func parse(_ arguments: [String], _ top: CommandSpec) throws(UsageError) -> ParsedCommandLine {
        var state = State(top: top)
        var rest = arguments[...]
        if arguments.first == "help", !top.subcommands.isEmpty || top.positionals.isEmpty {
            rest = rest.dropFirst()
            state.help = true
            if let name = rest.popFirst() {
                guard let sub = top.subcommand(named: name) else {
                    throw UsageError("unknown \(top.subcommandNoun) '\(name)'", usage: HelpText.usage(top, nil))
                }
                state.subcommand = sub
            }
            return state.result()
        }
        if rest.prefix(while: { $0 != "--" }).contains(where: { $0 == "-h" || $0 == "--help" }) { state.help = true }
        var onlyPositionals = false
        while let argument = rest.popFirst() {
            if !onlyPositionals && argument == "--" {
                onlyPositionals = true
            } else if !onlyPositionals && looksLikeOption(argument) {
                state.option(argument, &rest)
            } else {
                state.positional(argument)
            }
        }
        state.check()
        if let error = state.error, !state.help { throw error }
        return state.result()
    }

    /// `-x`, `--xyz`; but not `-` alone or a negative number like `-5`.
    static func looksLikeOption(_ argument: String) -> Bool {
        guard argument.hasPrefix("-"), argument.count > 1 else { return false }
        let second = argument[argument.index(after: argument.startIndex)]
        return !second.isASCII || !second.isNumber
    }

    private struct State {
        let top: CommandSpec
        var subcommand: CommandSpec?
        var help = false
        var values: [String: [String]] = [:]
        var positionals: [String] = []
        var error: UsageError?

        init(top: CommandSpec) { self.top = top }

        var current: CommandSpec { subcommand ?? top }

        func result() -> ParsedCommandLine {
            ParsedCommandLine(top: top, subcommand: subcommand, helpRequested: help, values: values, positionals: positionals)
        }

        mutating func fail(_ message: String) {
            if error == nil { error = UsageError(message, usage: HelpText.usage(top, subcommand)) }
        }

        /// The option called `name` where it stands: the command's own, a
        /// global one, or (before a subcommand is named) any subcommand's,
        /// checked once the subcommand is known.
        func lookUp(_ name: String) -> OptionSpec? {
            if name == "-h" || name == "--help" { return .flag(name, "") }
            if let option = current.option(named: name) ?? top.globalOptions.first(where: { $0.name == name }) { return option }
            if subcommand == nil { return top.subcommands.lazy.compactMap { $0.option(named: name) }.first }
            return nil
        }

        mutating func option(_ argument: String, _ rest: inout ArraySlice<String>) {
            var name = argument
            var inline: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            guard let option = lookUp(name) else {
                if top.subcommands.contains(where: { $0.option(named: name) != nil }), let subcommand {
                    return fail("\(top.subcommandNoun) '\(subcommand.name)' has no option \(name)")
                }
                return fail("unknown option \(name)")
            }
            if name == "-h" || name == "--help" { return }
            if option.arity == .flag {
                if inline != nil { return fail("option \(name) takes no value") }
                values[name, default: []].append("")
                return
            }
            guard let value = inline ?? rest.popFirst() else { return fail("option \(name) needs a value") }
            values[name, default: []].append(value)
        }

        mutating func positional(_ argument: String) {
            if subcommand == nil && positionals.isEmpty && !top.subcommands.isEmpty && top.positionals.isEmpty {
                guard let sub = top.subcommand(named: argument) else {
                    return fail("unknown \(top.subcommandNoun) '\(argument)'")
                }
                subcommand = sub
                for name in values.keys.sorted() where sub.option(named: name) == nil
                    && !top.globalOptions.contains(where: { $0.name == name }) {
                    fail("\(top.subcommandNoun) '\(sub.name)' has no option \(name)")
                }
                return
            }
            positionals.append(argument)
        }

        /// What can only be told at the end: a missing subcommand, too few
        /// or too many positionals, an option before the subcommand's name
        /// that it does not take.
        mutating func check() {
            if subcommand == nil {
                for name in values.keys.sorted() where top.option(named: name) == nil
                    && !top.globalOptions.contains(where: { $0.name == name }) {
                    fail("unknown option \(name)")
                }
                if !top.subcommands.isEmpty && !top.runsAlone && top.positionals.isEmpty {
                    fail("missing \(top.subcommandNoun)")
                }
            }
            let expected = current.positionals
            let required = expected.filter { !$0.optional }.count
            if positionals.count < required {
                fail("missing argument \(expected[positionals.count].name)")
            } else if positionals.count > expected.count && !(expected.last?.repeats ?? false) {
                fail("unexpected argument '\(positionals[expected.count])'"
                     + (expected.isEmpty ? "" : " (quote an argument with spaces)"))
            }
        }
    }
}
