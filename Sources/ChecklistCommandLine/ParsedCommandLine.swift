/// A parsed command line: the subcommand named, the options given and the
/// positional arguments, with typed readers that fail with a `UsageError`
/// naming the option.
public struct ParsedCommandLine: Sendable {
    public let top: CommandSpec
    /// The subcommand named, if any.
    public let subcommand: CommandSpec?
    /// `-h`, `--help` or `help` was given: print `helpText` and exit 0.
    public let helpRequested: Bool
    /// Every value of each option given, in order (`""` for each flag).
    public let values: [String: [String]]
    public let positionals: [String]

    /// The command the arguments are for: the subcommand, else the top one.
    public var command: CommandSpec { subcommand ?? top }

    /// The help of `command`.
    public var helpText: String { HelpText.help(top, subcommand) }

    /// The short usage of `command`, shown after a usage error.
    public var usage: String { HelpText.usage(top, subcommand) }

    /// A usage error about this command line, with its usage.
    public func error(_ message: String) -> UsageError { UsageError(message, usage: usage) }

    /// Whether option `name` was given (a flag, or an option with a value).
    public func has(_ name: String) -> Bool { values[name] != nil }

    /// Whether flag `name` was given.
    public func flag(_ name: String) -> Bool { has(name) }

    /// The last value of option `name`.
    public func string(_ name: String) -> String? { values[name]?.last }

    /// Every value of option `name`, in order.
    public func strings(_ name: String) -> [String] { values[name] ?? [] }

    /// The positional argument at `index`, when given.
    public func positional(_ index: Int) -> String? {
        positionals.indices.contains(index) ? positionals[index] : nil
    }

    /// The value of option `name` read by `read`, nil when the option is absent.
    public func value<T>(_ name: String, _ read: (String, String) throws(UsageError) -> T) throws(UsageError) -> T? {
        guard let text = string(name) else { return nil }
        do throws(UsageError) {
            return try read(name, text)
        } catch {
            throw error.withUsage(usage)
        }
    }

    /// A whole number within `min...max`.
    public func integer<T: FixedWidthInteger & Sendable>(_ name: String, _: T.Type = T.self, min: T = 0, max: T = .max) throws(UsageError) -> T? {
        try value(name) { (n: String, t: String) throws(UsageError) in try ValueParser.integer(n, t, min: min, max: max) }
    }

    /// A number of seconds from 0 (or above 0 with `positive`), fractions allowed.
    public func seconds(_ name: String, positive: Bool = false) throws(UsageError) -> Double? {
        try value(name) { (n: String, t: String) throws(UsageError) in try ValueParser.seconds(n, t, positive: positive) }
    }

    /// A number of seconds as a `Duration` (rounded up to a millisecond).
    public func duration(_ name: String, positive: Bool = false) throws(UsageError) -> Duration? {
        try seconds(name, positive: positive).map(ValueParser.duration)
    }

    /// A size in bytes, with an optional unit (`64MB`), at least `min`.
    public func bytes(_ name: String, min: Int = 0) throws(UsageError) -> Int? {
        try value(name) { (n: String, t: String) throws(UsageError) in try ValueParser.bytes(n, t, min: min) }
    }

    /// A number above 0 (fractions allowed).
    public func positiveNumber(_ name: String) throws(UsageError) -> Double? {
        try value(name) { (n: String, t: String) throws(UsageError) in try ValueParser.positiveNumber(n, t) }
    }

    /// One of `choices`.
    public func choice(_ name: String, _ choices: [String]) throws(UsageError) -> String? {
        try value(name) { (n: String, t: String) throws(UsageError) in try ValueParser.choice(n, t, choices) }
    }

    /// `HOST:PORT`.
    public func hostPort(_ name: String) throws(UsageError) -> HostPort? {
        try value(name) { (n: String, t: String) throws(UsageError) in try ValueParser.hostPort(n, t) }
    }
}
