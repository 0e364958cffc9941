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

    /// A size in bytes after `flag`: a number, optionally with a unit
    /// (`KB`, `MB`, `GB` and `KiB`, `MiB`, `GiB` all count in 1024s; `B`),
    /// at least `min`.
    mutating func bytes(_ flag: String, min: Int = 0) throws -> Int {
        let text = try value(flag)
        let digits = text.prefix { $0.isNumber }
        let unit = text.dropFirst(digits.count).lowercased()
        let scale: Int? = switch unit {
        case "", "b": 1
        case "k", "kb", "kib": 1 << 10
        case "m", "mb", "mib": 1 << 20
        case "g", "gb", "gib": 1 << 30
        default: nil
        }
        guard let scale, let n = Int(digits), n <= Int.max / scale else {
            throw Options.UsageError(description: "\(flag): '\(text)' is not a size (e.g. 67108864, 64MB, 2GB)")
        }
        guard n * scale >= min else { throw Options.UsageError(description: "\(flag) must be at least \(min) bytes") }
        return n * scale
    }
}
