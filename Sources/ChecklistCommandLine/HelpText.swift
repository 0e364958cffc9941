/// The help and usage texts of a `CommandSpec`, built from the same specs
/// the parser reads, so the help lists every option a command accepts.
public enum HelpText {
    /// The column where explanations start (below options longer than that).
    static let column = 26

    /// `usage:` lines and a pointer to the help: shown after a usage error.
    public static func usage(_ top: CommandSpec, _ subcommand: CommandSpec?) -> String {
        let lines = usageLines(top, subcommand)
        let helpCommand = subcommand.map { "\(top.name) \($0.name) --help" } ?? "\(top.name) --help"
        return lines.joined(separator: "\n") + "\nRun '\(helpCommand)' for details."
    }

    /// The whole help of `top` (or of its `subcommand`).
    public static func help(_ top: CommandSpec, _ subcommand: CommandSpec?) -> String {
        let command = subcommand ?? top
        var blocks = [usageLines(top, subcommand).joined(separator: "\n")]
        if !command.details.isEmpty {
            blocks.append(command.details)
        } else if subcommand != nil && !command.summary.isEmpty {
            blocks.append(command.summary.prefix(1).uppercased() + command.summary.dropFirst() + ".")
        }
        if subcommand == nil && !top.subcommands.isEmpty {
            let noun = top.subcommandNoun
            let entries = top.subcommands.map { (([$0.name] + $0.positionals.map(\.synopsis)).joined(separator: " "), $0.summary) }
                + [("help [\(noun.uppercased())]", "show this help, or a \(noun)'s")]
            blocks.append("\(noun.prefix(1).uppercased() + noun.dropFirst())s:\n" + table(entries).joined(separator: "\n"))
        }
        let own = command.options.map { ($0.synopsis, $0.help) } + [("-h, --help", "show this help")]
        blocks.append("Options:\n" + table(own).joined(separator: "\n"))
        if !top.globalOptions.isEmpty {
            let title = subcommand == nil && top.subcommands.isEmpty ? "More options:" : "Global options:"
            blocks.append(title + "\n" + table(top.globalOptions.map { ($0.synopsis, $0.help) }).joined(separator: "\n"))
        }
        if !command.epilogue.isEmpty { blocks.append(command.epilogue) }
        return blocks.joined(separator: "\n\n")
    }

    /// The usage lines: given by hand, or made from the positionals and options.
    static func usageLines(_ top: CommandSpec, _ subcommand: CommandSpec?) -> [String] {
        let command = subcommand ?? top
        var lines = command.synopsis
        if lines.isEmpty {
            var words = [top.name]
            if !top.globalOptions.isEmpty { words.append(subcommand == nil && top.subcommands.isEmpty ? "[options]" : "[global options]") }
            if let subcommand {
                words.append(subcommand.name)
            } else if !top.subcommands.isEmpty && !top.runsAlone {
                words.append(top.subcommandNoun.uppercased())
            }
            words += command.positionals.map(\.synopsis)
            if command.options.count <= 4 {
                words += command.options.map { "[\($0.synopsis)]" }
            } else {
                words.append("[options]")
            }
            lines = [words.joined(separator: " ")]
            if subcommand == nil && top.runsAlone && !top.subcommands.isEmpty {
                lines += top.subcommands.map { "\(top.name) \($0.name) ..." }
            }
        }
        return lines.enumerated().map { ($0.offset == 0 ? "usage: " : "       ") + $0.element }
    }

    /// Two columns, the left indented by two, explanations from `column`.
    public static func table(_ rows: [(String, String)]) -> [String] {
        let pad = String(repeating: " ", count: column)
        var lines: [String] = []
        for (left, text) in rows {
            var explanation = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if explanation.isEmpty { explanation = [""] }
            let head = "  " + left
            if head.count < column - 1 {
                lines.append(head + String(repeating: " ", count: column - head.count) + explanation[0])
            } else {
                lines.append(head)
                lines.append(pad + explanation[0])
            }
            lines += explanation.dropFirst().map { pad + $0 }
        }
        return lines.map { $0.hasSuffix(" ") ? String($0.reversed().drop { $0 == " " }.reversed()) : $0 }
    }
}
