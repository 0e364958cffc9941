import ChecklistLatency
import Foundation

/// One scenario's result: printed as an aligned table, or as one JSON
/// object with `--json` (keys documented in Benchmarks/README.md).
struct BenchReport {
    enum Value {
        case int(Int)
        case double(Double)
        case string(String)
        /// Named counts, e.g. errors by code: a JSON object.
        case counts([(String, UInt64)])

        var json: String {
            switch self {
            case .int(let v): return String(v)
            case .double(let v): return v.isFinite ? String(format: "%.4f", v) : "null"
            case .string(let v):
                let data = try? JSONSerialization.data(withJSONObject: [v], options: [])
                return data.flatMap { String(data: $0, encoding: .utf8) }.map { String($0.dropFirst().dropLast()) } ?? "\"\""
            case .counts(let pairs):
                return "{" + pairs.map { "\(Value.string($0.0).json): \($0.1)" }.joined(separator: ", ") + "}"
            }
        }

        var text: String {
            switch self {
            case .int(let v): return String(v)
            case .double(let v): return String(format: "%.3f", v)
            case .string(let v): return v
            case .counts(let pairs): return pairs.isEmpty ? "none" : pairs.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
            }
        }
    }

    private(set) var fields: [(key: String, value: Value)] = []

    mutating func add(_ key: String, _ value: Int) { fields.append((key, .int(value))) }
    mutating func add(_ key: String, _ value: UInt64) { fields.append((key, .int(Int(clamping: value)))) }
    mutating func add(_ key: String, _ value: Double) { fields.append((key, .double(value))) }
    mutating func add(_ key: String, _ value: String) { fields.append((key, .string(value))) }
    mutating func add(_ key: String, counts: [(String, UInt64)]) { fields.append((key, .counts(counts))) }

    /// Adds p50/p90/p99/p99.9/max keys (milliseconds) with the given prefix.
    mutating func addLatencies(_ h: LatencyHistogram, prefix: String = "", includeP90: Bool = false) {
        add(prefix.isEmpty ? "p50Ms" : "\(prefix)P50Ms", h.quantileMs(0.50))
        if includeP90 { add(prefix.isEmpty ? "p90Ms" : "\(prefix)P90Ms", h.quantileMs(0.90)) }
        add(prefix.isEmpty ? "p99Ms" : "\(prefix)P99Ms", h.quantileMs(0.99))
        add(prefix.isEmpty ? "p999Ms" : "\(prefix)P999Ms", h.quantileMs(0.999))
    }

    /// The number under `key`, if the report holds one.
    func number(_ key: String) -> Double? {
        switch fields.first(where: { $0.key == key })?.value {
        case .int(let v)?: return Double(v)
        case .double(let v)?: return v
        default: return nil
        }
    }

    func print(json: Bool) {
        if json {
            Swift.print("{" + fields.map { "\"\($0.key)\": \($0.value.json)" }.joined(separator: ", ") + "}")
        } else {
            let width = fields.map(\.key.count).max() ?? 0
            for (key, value) in fields {
                Swift.print(key.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value.text)
            }
        }
    }
}
