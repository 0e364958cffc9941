import ChecklistTLS

/// A tiny parser for `--key value` and `--flag` arguments.
struct BenchArguments {
    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    /// `--help` (or `-h`) was given: the caller prints the usage and exits 0.
    struct HelpRequested: Error {}

    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    /// Parses `arguments`; `flagNames` take no value.
    ///
    /// - Throws: `HelpRequested` when `--help` or `-h` is among them
    ///   (wherever it stands), else `UsageError` for what does not parse.
    init(_ arguments: ArraySlice<String>, flagNames: Set<String>) throws {
        if arguments.contains(where: { $0 == "--help" || $0 == "-h" }) { throw HelpRequested() }
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

    /// The TLS options (`--tls`, `--tls-ca FILE`, ...), for the scenarios
    /// that take them (`tls` is a flag: pass it in `flagNames`).
    static let tlsOptionNames: Set<String> = Set(([TLSClientOptions.flag] + TLSClientOptions.valueOptions).map { String($0.dropFirst(2)) })

    /// Whether any TLS option was given.
    var usesTLS: Bool { !Self.tlsOptionNames.isDisjoint(with: Set(values.keys).union(flags)) }

    /// `--tls` and the `--tls-*` options as given (no environment variables:
    /// the bench reads none).
    func tlsOptions() throws -> TLSClientOptions {
        var options = TLSClientOptions()
        if flag("tls") { _ = options.set(TLSClientOptions.flag, nil) }
        for name in TLSClientOptions.valueOptions {
            if let value = values[String(name.dropFirst(2))] { _ = options.set(name, value) }
        }
        do throws(TLSClientOptions.UsageError) {
            _ = try options.configuration()
        } catch {
            throw UsageError(description: error.message)
        }
        return options
    }

    /// Rejects keys no scenario option names.
    func check(allowed: Set<String>) throws {
        for key in Set(values.keys).union(flags) where !allowed.contains(key) {
            throw UsageError(description: "unknown option --\(key)")
        }
    }
}
