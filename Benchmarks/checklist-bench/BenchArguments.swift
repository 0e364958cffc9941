/// A tiny parser for `--key value` and `--flag` arguments.
struct BenchArguments {
    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    /// Parses `arguments`; `flagNames` take no value.
    init(_ arguments: ArraySlice<String>, flagNames: Set<String>) throws {
        var rest = arguments
        while let arg = rest.popFirst() {
            guard arg.hasPrefix("--") else { throw UsageError(description: "unexpected argument '\(arg)'") }
            let key = String(arg.dropFirst(2))
            if flagNames.contains(key) {
                flags.insert(key)
            } else {
                guard let value = rest.popFirst() else { throw UsageError(description: "\(arg) needs a value") }
                values[key] = value
            }
        }
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }

    func string(_ name: String) -> String? { values[name] }

    func int(_ name: String, default fallback: Int, min: Int = 0) throws -> Int {
        guard let text = values[name] else { return fallback }
        guard let v = Int(text), v >= min else {
            throw UsageError(description: "--\(name): '\(text)' is not a whole number >= \(min)")
        }
        return v
    }

    func double(_ name: String, default fallback: Double) throws -> Double {
        guard let text = values[name] else { return fallback }
        guard let v = Double(text), v > 0 else { throw UsageError(description: "--\(name): '\(text)' is not a positive number") }
        return v
    }

    /// Rejects keys no scenario option names.
    func check(allowed: Set<String>) throws {
        for key in Set(values.keys).union(flags) where !allowed.contains(key) {
            throw UsageError(description: "unknown option --\(key)")
        }
    }
}
