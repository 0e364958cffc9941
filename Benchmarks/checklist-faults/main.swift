import ChecklistCommandLine
import ChecklistFaults
import Foundation

let parsed = CommandLineTool.parseOrExit(Array(CommandLine.arguments.dropFirst()), FaultsCommand.top)
var options = FaultRun.Options(seed: UInt64.random(in: 1...UInt64(UInt32.max)))
let json = parsed.flag("--json")
var details = 10
let historyFile = parsed.string("--history")
do throws(UsageError) {
    if let seed = try parsed.integer("--seed", UInt64.self) { options.seed = seed }
    if let seconds = try parsed.integer("--seconds", Int.self) { options.seconds = seconds }
    if let nodes = try parsed.integer("--nodes", Int.self) { options.nodes = max(1, nodes) }
    // Streams 100 and up are the others'.
    if let writers = try parsed.integer("--writers", Int.self) { options.writers = min(99, max(1, writers)) }
    if let lists = try parsed.integer("--lists", Int.self) { options.lists = max(1, lists) }
    if let subscribers = try parsed.integer("--subscribers", Int.self) { options.subscribers = subscribers }
    if let timeout = try parsed.integer("--statement-timeout", Int.self) { options.statementTimeoutSeconds = max(1, timeout) }
    if let limit = try parsed.integer("--details", Int.self) { details = limit }
    if let kinds = parsed.string("--faults") {
        do { options.faults = try FaultKind.parse(kinds) } catch { throw parsed.error("--faults: \(error)") }
    }
} catch {
    CommandLineTool.fail(error, program: "checklist-faults")
}

// The seed first, so that a run that dies half-way can be replayed.
FileHandle.standardError.write(Data("checklist-faults: seed \(options.seed)\n".utf8))
let quiet = json
do {
    let result = try FaultRun(options).run { line in
        if !quiet { FileHandle.standardError.write(Data("checklist-faults: \(line)\n".utf8)) }
    }
    if let historyFile {
        let text = HistoryDump.lines(result.history).joined(separator: "\n") + "\n"
        if !FileManager.default.createFile(atPath: historyFile, contents: Data(text.utf8)) {
            FileHandle.standardError.write(Data("checklist-faults: cannot write \(historyFile)\n".utf8))
        }
    }
    print(json ? FaultReport.json(result) : FaultReport.text(result, detailLimit: details))
    exit(result.violations.isEmpty && result.settled ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("checklist-faults: \(error)\n".utf8))
    exit(3)
}
