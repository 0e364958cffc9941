/// What one command accepts: its positional arguments, its options and its
/// subcommands (the scenarios of a bench, the commands of the CLI), and the
/// texts of its help. `CommandLineParser` parses against it and `HelpText`
/// prints it.
public struct CommandSpec: Sendable {
    /// The program's name for the top command (`checklistd`), else the
    /// subcommand's (`export`).
    public let name: String
    /// One line for the list of commands (subcommands only).
    public let summary: String
    /// Usage lines given by hand, in place of the generated one (without
    /// `usage:`; the program name included).
    public let synopsis: [String]
    /// The paragraphs after the usage lines.
    public let details: String
    public let positionals: [Positional]
    /// The options of this command only.
    public let options: [OptionSpec]
    /// The options every subcommand takes too, accepted before and after
    /// the subcommand's name (top command only).
    public let globalOptions: [OptionSpec]
    /// The subcommands; a top command with subcommands and no positionals
    /// runs alone only if `runsAlone`.
    public let subcommands: [CommandSpec]
    /// What the help calls a subcommand: "command", "scenario".
    public let subcommandNoun: String
    /// Whether a top command with subcommands may be run without one
    /// (`checklistd` serves; `checklistd export` exports).
    public let runsAlone: Bool
    /// The text at the end of the help (environment, exit status, notes).
    public let epilogue: String

    public init(name: String, summary: String = "", synopsis: [String] = [], details: String = "",
                positionals: [Positional] = [], options: [OptionSpec] = [], globalOptions: [OptionSpec] = [],
                subcommands: [CommandSpec] = [], subcommandNoun: String = "command", runsAlone: Bool = false,
                epilogue: String = "") {
        self.name = name
        self.summary = summary
        self.synopsis = synopsis
        self.details = details
        self.positionals = positionals
        self.options = options
        self.globalOptions = globalOptions
        self.subcommands = subcommands
        self.subcommandNoun = subcommandNoun
        self.runsAlone = runsAlone
        self.epilogue = epilogue
        var seen = Set(["-h", "--help"])
        for option in options + globalOptions {
            precondition(seen.insert(option.name).inserted, "\(name): option \(option.name) given twice")
        }
    }

    /// The subcommand called `name`.
    public func subcommand(named name: String) -> CommandSpec? {
        subcommands.first { $0.name == name }
    }

    /// This command's option called `name` (not the global ones).
    public func option(named name: String) -> OptionSpec? {
        options.first { $0.name == name }
    }
}
