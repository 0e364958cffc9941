import ChecklistFaults
import Foundation

let usage = """
usage: checklist-faults [--seed N] [--seconds 60] [--nodes 3] [--faults KINDS] [--writers 6]
                        [--lists 4] [--subscribers 2] [--statement-timeout 5] [--json] [--details 10]
                        [--history FILE]

A Jepsen-style fault test of several `checklistd --postgres` nodes on one
private PostgreSQL (started here, in a temporary directory, on 127.0.0.1):
keyed writers retrying across nodes, a reader paging and reading the feed,
subscribers moving between nodes, while a seeded nemesis injects faults.
After the heal, every list is read from every node and a checker decides,
from the history and those reads alone, whether every promise held.
docs/FAULTS.md says what each check means.

  --seed N            the seed of every random choice (default: random; printed)
  --seconds S         how long the workload and the faults run (default 60)
  --nodes N           checklistd nodes (default 3)
  --faults KINDS      comma-separated, or all, or none (default all):
\(FaultKind.allCases.map { "                        \($0.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)) \($0.summary)" }.joined(separator: "\n"))
  --writers N         keyed writers (default 6, at most 99)
  --lists N           shared lists (default 4)
  --subscribers N     subscribers moving between nodes (default 2)
  --statement-timeout S  every node's --postgres-statement-timeout (default 5)
  --json              one JSON object instead of the table
  --details N         violations shown per kind in the table (default 10)
  --history FILE      also write the whole history there, one event a line

Needs PostgreSQL's programs (/usr/lib/postgresql/*/bin or $CHECKLIST_PG_BINDIR)
and the checklistd built next to this program (or $CHECKLISTS_BIN_DIR).
Exits 0 when no promise was broken, 1 when one was, 2 on a bad option, 3
when the harness could not run.
"""

var options = FaultRun.Options(seed: UInt64.random(in: 1...UInt64(UInt32.max)))
var json = false
var details = 10
var historyFile: String?
var arguments = CommandLine.arguments.dropFirst()

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("checklist-faults: \(message)\n".utf8))
    exit(2)
}

@MainActor func number(_ flag: String) -> Int {
    guard let text = arguments.popFirst(), let value = Int(text), value >= 0 else { fail("\(flag) needs a number") }
    return value
}

while let flag = arguments.popFirst() {
    switch flag {
    case "-h", "--help", "help":
        print(usage)
        exit(0)
    case "--seed":
        guard let text = arguments.popFirst(), let seed = UInt64(text) else { fail("--seed needs a number") }
        options.seed = seed
    case "--seconds": options.seconds = number(flag)
    case "--nodes": options.nodes = max(1, number(flag))
    case "--writers": options.writers = min(99, max(1, number(flag)))  // streams 100 and up are the others'

    case "--lists": options.lists = max(1, number(flag))
    case "--subscribers": options.subscribers = number(flag)
    case "--statement-timeout": options.statementTimeoutSeconds = max(1, number(flag))
    case "--details": details = number(flag)
    case "--faults":
        guard let text = arguments.popFirst() else { fail("--faults needs kinds") }
        do { options.faults = try FaultKind.parse(text) } catch { fail("\(error)") }
    case "--json": json = true
    case "--history":
        guard let path = arguments.popFirst() else { fail("--history needs a file") }
        historyFile = path
    default: fail("unknown option \(flag) (see --help)")
    }
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
