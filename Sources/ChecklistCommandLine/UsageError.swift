/// A command line that cannot be run: an unknown option, a missing or bad
/// value, a missing argument, or options that do not go together.
///
/// Every executable reports it the same way (`CommandLineTool.fail`): the
/// program's name and `message` on standard error, then `usage`, and exit
/// status `UsageError.exitStatus`.
public struct UsageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The exit status of bad usage, the same in every tool (their docs say 2).
    public static let exitStatus: Int32 = 2

    /// What is wrong, naming the option or argument (`--port: 'x' is not a whole number`).
    public let message: String
    /// The usage lines of the command concerned, shown after the message
    /// (empty when the caller has none to show).
    public let usage: String

    public init(_ message: String, usage: String = "") {
        self.message = message
        self.usage = usage
    }

    /// The same error shown with `usage` (the command's, when it was made
    /// without one).
    public func withUsage(_ usage: String) -> UsageError {
        UsageError(message, usage: usage)
    }

    public var description: String { message }

    /// Two usage errors are the same when they say the same; the usage shown after does not count.
    public static func == (a: UsageError, b: UsageError) -> Bool { a.message == b.message }

    public func hash(into hasher: inout Hasher) { hasher.combine(message) }
}
