import Foundation

/// The report of a run: its seed and figures, then each violation, as a
/// table for people or one JSON object (`--json`).
public enum FaultReport {
    /// The command that replays `options`.
    public static func command(_ options: FaultRun.Options) -> String {
        var command = "checklist-faults --seed \(options.seed) --seconds \(options.seconds) --nodes \(options.nodes) --faults \(options.faults.isEmpty ? "none" : options.faults.sorted().map(\.rawValue).joined(separator: ","))"
        let defaults = FaultRun.Options(seed: 0)
        if options.writers != defaults.writers { command += " --writers \(options.writers)" }
        if options.lists != defaults.lists { command += " --lists \(options.lists)" }
        if options.subscribers != defaults.subscribers { command += " --subscribers \(options.subscribers)" }
        if options.statementTimeoutSeconds != defaults.statementTimeoutSeconds {
            command += " --statement-timeout \(options.statementTimeoutSeconds)"
        }
        return command
    }

    static func ms(_ nanoseconds: UInt64) -> Int { Int(nanoseconds / 1_000_000) }

    /// Violations counted by kind, in the order of `Violation.Kind`.
    public static func counts(_ violations: [Violation]) -> [(Violation.Kind, Int)] {
        Violation.Kind.allCases.compactMap { kind in
            let n = violations.filter { $0.kind == kind }.count
            return n > 0 ? (kind, n) : nil
        }
    }

    /// The human table; at most `detailLimit` details of each kind.
    public static func text(_ result: FaultRun.Result, detailLimit: Int = 10) -> String {
        let f = result.figures
        var lines: [String] = []
        lines.append("seed \(result.options.seed)   replay: \(command(result.options))")
        lines.append("patches        \(f.patches) (\(f.attempts) sendings)")
        lines.append("acknowledged   \(f.acknowledged)")
        lines.append("errors         \(f.errors) (definite: CONFLICT, NOT_FOUND, ...)")
        lines.append("indeterminate  \(f.indeterminate) (\(f.unavailableAnswers) answers UNAVAILABLE, \(f.lostAnswers) lost)")
        lines.append("reads          \(f.pages) pages, \(f.changesReads) CHANGES, \(f.deliveries) changes to \(f.subscriptions) subscriptions")
        let faults = FaultKind.allCases.compactMap { kind in f.faults[kind].map { "\(kind.rawValue) \($0)" } }
        lines.append("faults         \(faults.isEmpty ? "none" : faults.joined(separator: ", "))")
        lines.append("no ack for     \(ms(f.longestWithoutAck.nanoseconds)) ms at most (writer \(f.longestWithoutAck.client), from \(Checker.seconds(f.longestWithoutAck.from)))")
        lines.append("slowest answer \(ms(f.longestAnswer)) ms")
        if !result.settled { lines.append("settled        NO: the nodes did not agree on the lists' revisions within 60 s of the heal") }
        for fault in result.history.faults where fault.note != nil {
            lines.append("harness note   \(fault.kind.rawValue) node \(fault.node.map(String.init) ?? "-") at \(Checker.seconds(fault.startedAt)): \(fault.note!)")
        }
        let counts = counts(result.violations)
        lines.append("violations     \(result.violations.count)\(counts.isEmpty ? "" : ": " + counts.map { "\($0.0.rawValue) \($0.1)" }.joined(separator: ", "))")
        for (kind, n) in counts {
            for violation in result.violations.filter({ $0.kind == kind }).prefix(detailLimit) {
                lines.append("  \(violation)")
            }
            if n > detailLimit { lines.append("  ... \(n - detailLimit) more \(kind.rawValue)") }
        }
        return lines.joined(separator: "\n")
    }

    /// One JSON object: the options, the figures, the violations (every one).
    public static func json(_ result: FaultRun.Result) -> String {
        let f = result.figures
        let object: [String: Any] = [
            "seed": result.options.seed,
            "seconds": result.options.seconds,
            "nodes": result.options.nodes,
            "faultKinds": result.options.faults.sorted().map(\.rawValue),
            "replay": command(result.options),
            "patches": f.patches,
            "sendings": f.attempts,
            "acknowledged": f.acknowledged,
            "errors": f.errors,
            "indeterminate": f.indeterminate,
            "unavailableAnswers": f.unavailableAnswers,
            "lostAnswers": f.lostAnswers,
            "pages": f.pages,
            "changesReads": f.changesReads,
            "deliveries": f.deliveries,
            "faults": Dictionary(uniqueKeysWithValues: f.faults.map { ($0.key.rawValue, $0.value) }),
            "longestWithoutAckMs": ms(f.longestWithoutAck.nanoseconds),
            "longestAnswerMs": ms(f.longestAnswer),
            "settled": result.settled,
            "harnessNotes": result.history.faults.compactMap(\.note),
            "violationCount": result.violations.count,
            "violationsByKind": Dictionary(uniqueKeysWithValues: counts(result.violations).map { ($0.0.rawValue, $0.1) }),
            "violations": result.violations.map { v -> [String: Any] in
                var entry: [String: Any] = ["kind": v.kind.rawValue, "detail": v.detail]
                if let list = v.list { entry["list"] = list.rawValue }
                return entry
            },
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
