/// Walks `checklistd`'s arguments: each flag, then the value it needs.
/// Every read that fails throws `Options.UsageError` naming the flag.
struct ArgumentCursor {
    private var rest: ArraySlice<String>

    init(_ arguments: [String]) { rest = arguments[...] }

    /// The next argument, or nil at the end.
    mutating func next() -> String? { rest.popFirst() }

    /// The value after `flag`.
    mutating func value(_ flag: String) throws -> String {
        guard let v = rest.popFirst() else { throw Options.UsageError(description: "\(flag) needs a value") }
        return v
    }

    /// The integer after `flag`, within `min...max`.
    mutating func number<T: FixedWidthInteger>(_ flag: String, _: T.Type, min: T = 0, max: T = .max) throws -> T {
        let text = try value(flag)
        guard let n = T(text), n >= min else { throw Options.UsageError(description: "\(flag): '\(text)' is not a valid number") }
        guard n <= max else { throw Options.UsageError(description: "\(flag): \(n) is above the most allowed, \(max)") }
        return n
    }

    /// The number of seconds after `flag` (0 to 10^9, fractions allowed).
    mutating func seconds(_ flag: String) throws -> Double {
        let text = try value(flag)
        guard let seconds = Double(text), seconds >= 0, seconds <= 1e9 else {
            throw Options.UsageError(description: "\(flag): '\(text)' is not a number of seconds")
        }
        return seconds
    }
}
