/// An option together with what it does to the settings being built, so a
/// tool declares each option in one place: name, value, help and effect.
///
///     .value("--port", "PORT", "TCP port (default 7420)") { $0.port = try $1.integer() }
public struct BoundOption<Target>: Sendable {
    public let spec: OptionSpec
    let apply: @Sendable (inout Target, OptionValue) throws -> Void

    public init(_ spec: OptionSpec, _ apply: @escaping @Sendable (inout Target, OptionValue) throws -> Void) {
        self.spec = spec
        self.apply = apply
    }

    /// A flag and what it sets.
    public static func flag(_ name: String, _ help: String, _ apply: @escaping @Sendable (inout Target) -> Void) -> BoundOption {
        BoundOption(.flag(name, help)) { target, _ in apply(&target) }
    }

    /// An option with a value and what it sets from it.
    public static func value(_ name: String, _ placeholder: String, _ help: String,
                             _ apply: @escaping @Sendable (inout Target, OptionValue) throws -> Void) -> BoundOption {
        BoundOption(.value(name, placeholder, help), apply)
    }

    /// An option that may be given several times, and what each value sets.
    public static func repeated(_ name: String, _ placeholder: String, _ help: String,
                                _ apply: @escaping @Sendable (inout Target, OptionValue) throws -> Void) -> BoundOption {
        BoundOption(.repeated(name, placeholder, help), apply)
    }
}

/// The value given to a `BoundOption`, with readers that name the option
/// in their errors.
public struct OptionValue: Sendable {
    public let name: String
    public let text: String

    public func integer<T: FixedWidthInteger>(min: T = 0, max: T = .max) throws(UsageError) -> T {
        try ValueParser.integer(name, text, min: min, max: max)
    }

    public func seconds(positive: Bool = false) throws(UsageError) -> Double {
        try ValueParser.seconds(name, text, positive: positive)
    }

    /// Seconds as a `Duration`; 0 is nil ("never") unless `positive` refuses it.
    public func duration(positive: Bool = false) throws(UsageError) -> Duration? {
        let seconds = try seconds(positive: positive)
        return seconds == 0 ? nil : ValueParser.duration(seconds)
    }

    public func bytes(min: Int = 0) throws(UsageError) -> Int {
        try ValueParser.bytes(name, text, min: min)
    }

    public func choice(_ choices: [String]) throws(UsageError) -> String {
        try ValueParser.choice(name, text, choices)
    }

    /// A usage error about this option.
    public func error(_ message: String) -> UsageError { UsageError("\(name): \(message)") }
}

extension ParsedCommandLine {
    /// Applies each option of `options` that was given (the last value of
    /// each; every value, in order, of a repeated one) to `target`, in the
    /// order of `options`.
    public func apply<Target>(_ options: [BoundOption<Target>], to target: inout Target) throws(UsageError) {
        for option in options {
            let texts = option.spec.arity == .repeated ? strings(option.spec.name) : string(option.spec.name).map { [$0] } ?? []
            for text in texts {
                do {
                    try option.apply(&target, OptionValue(name: option.spec.name, text: text))
                } catch let error as UsageError {
                    throw error.withUsage(usage)
                } catch {
                    throw UsageError("\(option.spec.name): \(error)", usage: usage)
                }
            }
        }
    }
}
