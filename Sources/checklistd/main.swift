import ChecklistStorage
import ChecklistCommandLine
import ChecklistEventLoop
import ChecklistServer
import Foundation

#if os(Linux)
// Before anything else: may start the process again (MallocTunables.swift).
MallocTunables.restartWithTunables()
#endif

let parsed = CommandLineTool.parseOrExit(Array(CommandLine.arguments.dropFirst()), Options.command)
// `checklistd export|import ...` (offline, OfflineCommands.swift) run and exit here.
if let status = OfflineCommands.run(parsed) { exit(status) }

let options: Options
do throws(UsageError) {
    options = try Options(parsed)
} catch {
    CommandLineTool.fail(error, program: "checklistd")
}

do {
    // First, before any thread starts: every later thread inherits the
    // blocked signals, so SIGINT/SIGTERM reach only the watcher.
    let stop = DispatchSemaphore(value: 0)
    FreeMemory.keepHeapTight()
    let accessControl = try AccessSetup.start(options)
    let tls = try TLSSetup.start(options)
    let signals = try SignalWatcher(signals: [SIGINT, SIGTERM, SIGHUP]) { signal in
        if signal == SIGHUP {
            AccessSetup.reload(accessControl)
            TLSSetup.reload(tls)
        } else {
            stop.signal()
        }
    }
    ignoreBrokenPipeSignal()
    var configuration = options.configuration
    configuration.accessControl = accessControl
    configuration.tls = tls
    configuration.plainPort = options.plainPort
    configuration.plainHost = TLSSetup.plainHost(options)
    let storage = StorageChoice.opener(options)
    let service = try ChecklistService(ServiceOptions(configuration: configuration, storage: storage,
                                                      seedDemo: options.seedDemo) { _ in exit(1) })
    let server = service.server
    if let metrics = server.metricsAddress {
        // Before the readiness line, so whoever waits for that one has this too.
        FileHandle.standardOutput.write(Data("checklistd: metrics on http://\(metrics)/metrics\n".utf8))
    }
    if let plain = server.plainAddress {
        FileHandle.standardOutput.write(Data("checklistd: plaintext on \(plain)\n".utf8))
    }
    if let web = server.webAddress {
        FileHandle.standardOutput.write(Data("checklistd: web on \(web)\n".utf8))
    }
    // The readiness line tests and scripts wait for; written unbuffered.
    FileHandle.standardOutput.write(Data("checklistd: listening on \(server.localAddress)\n".utf8))
    stop.wait()
    try service.shutdown()
    signals.stop()
    exit(0)
} catch {
    if let (status, message) = StorageChoice.unreachable(error) {
        FileHandle.standardError.write(Data("checklistd: \(message)\n".utf8))
        exit(status)
    }
    FileHandle.standardError.write(Data("checklistd: \(error)\n".utf8))
    exit(1)
}
