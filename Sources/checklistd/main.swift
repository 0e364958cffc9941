import ChecklistServer
import ChecklistStore
import Foundation

let options: Options
do {
    guard let parsed = try Options.parse(Array(CommandLine.arguments.dropFirst())) else {
        print(Options.usage)
        exit(0)
    }
    options = parsed
} catch {
    FileHandle.standardError.write(Data("checklistd: \(error)\n\(Options.usage)\n".utf8))
    exit(2)
}

do {
    // First, before any thread starts: every later thread inherits the
    // blocked signals, so SIGINT/SIGTERM reach only the watcher.
    let stop = DispatchSemaphore(value: 0)
    let signals = try SignalWatcher(signals: [SIGINT, SIGTERM]) { _ in stop.signal() }
    ignoreBrokenPipeSignal()
    try FileManager.default.createDirectory(atPath: options.configuration.dataDirectory, withIntermediateDirectories: true)
    let store = Store(limits: options.configuration.limits)
    if options.seedDemo {
        try DemoData.seedIfEmpty(store)
    }
    let server = try ChecklistServer(configuration: options.configuration, store: store)
    // The readiness line tests and scripts wait for; written unbuffered.
    FileHandle.standardOutput.write(Data("checklistd: listening on \(server.localAddress)\n".utf8))
    stop.wait()
    FileHandle.standardError.write(Data("checklistd: stopping\n".utf8))
    server.shutdown()
    signals.stop()
    exit(0)
} catch {
    FileHandle.standardError.write(Data("checklistd: \(error)\n".utf8))
    exit(1)
}
