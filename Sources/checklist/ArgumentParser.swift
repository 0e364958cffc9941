import ChecklistClient

/// The command line split into global options, the command, its
/// positional arguments and its options. Options may come before or after
/// the positionals; `--` ends options; `--name=value` and `--name value`
/// are both accepted.
struct ParsedArguments {
    var server: String?
    var token: String?
    var json = false
    /// `--tls` and the `--tls-*` options given (the environment's are added by `checkedCommand`).
    var tls = TLSClientOptions()
    var help = false
    var command: String?
    var positionals: [String] = []
    var options: [String: String] = [:]
    /// Every value of each option, in order (for options that may repeat,
    /// like `export --list`); `options` keeps the last one.
    var repeated: [String: [String]] = [:]
    /// The first problem found; reported unless help was asked for.
    var error: String?

    init(_ arguments: [String]) {
        var rest = arguments[...]
        var onlyPositionals = false
        while let argument = rest.popFirst() {
            if onlyPositionals || !Self.looksLikeOption(argument) {
                if command == nil { command = argument } else { positionals.append(argument) }
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            if GlobalOption.help.contains(argument) {
                help = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            if name == GlobalOption.json {
                if inlineValue != nil { fail("option --json takes no value") }
                json = true
                continue
            }
            if name == TLSClientOptions.flag {
                if inlineValue != nil { fail("option --tls takes no value") }
                _ = tls.set(name, nil)
                continue
            }
            let isGlobal = name == GlobalOption.server || name == GlobalOption.token || TLSClientOptions.valueOptions.contains(name)
            guard isGlobal || Commands.allOptionNames.contains(name) else {
                fail("unknown option \(name)")
                continue
            }
            if Commands.flagOptionNames.contains(name) {
                if inlineValue != nil { fail("option \(name) takes no value") }
                options[name] = ""
                continue
            }
            guard let value = inlineValue ?? rest.popFirst() else {
                fail("option \(name) needs a value")
                continue
            }
            if name == GlobalOption.server {
                server = value
            } else if name == GlobalOption.token {
                token = value
            } else if tls.set(name, value) {
                continue
            } else {
                options[name] = value
                repeated[name, default: []].append(value)
            }
        }
    }

    private mutating func fail(_ message: String) {
        if error == nil { error = message }
    }

    /// `-x`, `--xyz`; but not `-` alone or a negative number like `-5`.
    private static func looksLikeOption(_ argument: String) -> Bool {
        guard argument.hasPrefix("-"), argument.count > 1 else { return false }
        let second = argument[argument.index(after: argument.startIndex)]
        return !second.isASCII || !second.isNumber
    }
}
