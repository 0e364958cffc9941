/// One option a command accepts: its name, whether it takes a value, and
/// its line in the help. The parser accepts exactly the options of the
/// specs, and the help lists exactly them, so the two cannot drift apart.
public struct OptionSpec: Sendable, Hashable {
    /// How many values the option takes.
    public enum Arity: Sendable, Hashable {
        /// No value (`--json`).
        case flag
        /// One value (`--port 7420` or `--port=7420`); given twice, the last counts.
        case value
        /// One value each time; every value is kept, in order (`--list A --list B`).
        case repeated
    }

    /// The option as typed, with its dashes: `--port`.
    public let name: String
    public let arity: Arity
    /// The value's placeholder in the help (`PORT`); empty for a flag.
    public let placeholder: String
    /// What it does and its default; lines after the first continue the explanation.
    public let help: String

    public init(name: String, arity: Arity, placeholder: String, help: String) {
        precondition(name.hasPrefix("-"), "an option's name starts with a dash: \(name)")
        self.name = name
        self.arity = arity
        self.placeholder = placeholder
        self.help = help
    }

    /// An option without a value.
    public static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, arity: .flag, placeholder: "", help: help)
    }

    /// An option with one value.
    public static func value(_ name: String, _ placeholder: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, arity: .value, placeholder: placeholder, help: help)
    }

    /// An option that may be given several times, each with a value.
    public static func repeated(_ name: String, _ placeholder: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, arity: .repeated, placeholder: placeholder, help: help)
    }

    /// `--port PORT`, or `--json` for a flag.
    public var synopsis: String { arity == .flag ? name : "\(name) \(placeholder)" }
}

/// A positional argument of a command (`FILE`, `HOST:PORT`).
public struct Positional: Sendable, Hashable {
    public let name: String
    /// It may be left out (only the last ones may be).
    public let optional: Bool
    /// It takes every remaining argument (the last one only).
    public let repeats: Bool

    public init(_ name: String, optional: Bool = false, repeats: Bool = false) {
        self.name = name
        self.optional = optional || repeats
        self.repeats = repeats
    }

    /// `FILE`, `[FILE]`, `[LIST]...`
    public var synopsis: String {
        optional ? "[\(name)]" + (repeats ? "..." : "") : name
    }
}
