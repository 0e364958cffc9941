import ChecklistCommandLine
import ChecklistSnapshot
import Foundation

let parsed = CommandLineTool.parseOrExit(Array(CommandLine.arguments.dropFirst()), BenchCommand.top)
let arguments = BenchArguments(parsed)
do {
    switch parsed.subcommand?.name {
    case "codec": try CodecScenario.run(arguments)
    case "pages": try await PagesScenario.run(arguments)
    case "scroll": try await ScrollScenario.run(arguments)
    case "restart": try RestartScenario.run(arguments)
    case "hello": try HelloScenario.run(arguments)
    case "rate": try RateScenario.run(arguments)
    case "websocket": try await WebSocketScenario.run(arguments)
    case "memory": try await MemoryScenario.run(arguments)
    case "cache": try await CacheScenario.run(arguments)
    case "fanout": try await FanoutScenario.run(arguments)
    case "load": try await LoadScenario.run(arguments)
    case "failover": try await FailoverScenario.run(arguments)
    case "pgbench": try await PgbenchScenario.run(arguments)
    case "snapshot": try await SnapshotScenario.run(arguments)
    default: fatalError("the parser accepted scenario \(parsed.subcommand?.name ?? "none") but nothing runs it")
    }
} catch let error as UsageError {
    CommandLineTool.fail(error.usage.isEmpty ? error.withUsage(parsed.usage) : error, program: "checklist-bench")
} catch {
    FileHandle.standardError.write(Data("checklist-bench: \(error)\n".utf8))
    exit(1)
}
