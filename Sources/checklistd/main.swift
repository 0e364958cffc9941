import ChecklistEventLoop
import ChecklistServer
import ChecklistStore
import Foundation

// `checklistd export|import ...` (offline, OfflineCommands.swift) run and exit here.
if let status = OfflineCommands.run(Array(CommandLine.arguments.dropFirst())) { exit(status) }

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
    let accessControl = try AccessSetup.start(options)
    let signals = try SignalWatcher(signals: [SIGINT, SIGTERM, SIGHUP]) { signal in
        if signal == SIGHUP { AccessSetup.reload(accessControl) } else { stop.signal() }
    }
    ignoreBrokenPipeSignal()
    try FileManager.default.createDirectory(atPath: options.configuration.dataDirectory, withIntermediateDirectories: true)
    // Every committed change goes to the consumers of the fan-out, in
    // commit order: first the write-ahead log, then live sync.
    let liveSync = SubscriptionHub(configuration: options.configuration.liveSync,
                                   maxFrameBytes: options.configuration.limits.maxFrameBytes)
    let fanout = CommitFanout()
    let store = Store(limits: options.configuration.limits, onCommitGroup: fanout.onCommitGroup)
    let fatal = ServerLog(level: options.configuration.logLevel)
    // The changes replayed from the log go to live sync's retained feed:
    // a client catching up after a restart is not told to refetch.
    let storage = try ServerStorage(path: options.configuration.dataDirectory, policy: options.fsync, store: store,
                                    onReplayed: liveSync.retain) { error in
        // Durability can no longer be promised: stop rather than acknowledge
        // changes that may not survive.
        fatal.error("log_failed", ["error": "\(error)"])
        exit(1)
    }
    fanout.add(storage.append)
    fanout.addEach(liveSync.publish)
    if options.seedDemo {
        try DemoData.seedIfEmpty(store)
    }
    var configuration = options.configuration
    configuration.accessControl = accessControl
    let server = try ChecklistServer(configuration: configuration, store: store, liveSync: liveSync, storage: storage)
    server.logStart()
    server.logRecovery(storage.recovery, policy: options.fsync)
    server.metrics.setDurabilityStatusProvider { storage.status }
    let compactor = Compactor(storage: storage, changes: options.snapshotAfter) { result in
        server.logSnapshot(result)
    }
    if let metrics = server.metricsAddress {
        // Before the readiness line, so whoever waits for that one has this too.
        FileHandle.standardOutput.write(Data("checklistd: metrics on http://\(metrics)/metrics\n".utf8))
    }
    // The readiness line tests and scripts wait for; written unbuffered.
    FileHandle.standardOutput.write(Data("checklistd: listening on \(server.localAddress)\n".utf8))
    stop.wait()
    server.log.info("stopping", ["connections": server.metrics.report().connectionsOpen])
    let result = server.shutdown()
    compactor.stop()
    try storage.close()
    server.logStop(result)
    signals.stop()
    exit(0)
} catch {
    FileHandle.standardError.write(Data("checklistd: \(error)\n".utf8))
    exit(1)
}
