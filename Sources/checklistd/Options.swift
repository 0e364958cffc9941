import ChecklistPersistence
import ChecklistServer

/// `checklistd`'s command line.
struct Options {
    var configuration = ServerConfiguration()
    var seedDemo = false
    /// When the write-ahead log is fsynced.
    var fsync: FsyncPolicy = .everysec
    /// Log records after which a background snapshot is written.
    var snapshotAfter: UInt64 = 1_000_000
    /// `--tokens FILE`: access control (Protocol/SPEC.md section 2).
    var tokensFile: String?
    /// `--insecure-bind`: allow a non-loopback host without `--tokens`.
    var insecureBind = false

    static let usage = """
    usage: checklistd [options]
           checklistd export|import --data-dir DIR ... FILE   (server stopped; 'checklistd export --help')

    Serves checklists over the Checklists binary protocol v1 (Protocol/SPEC.md).
    Prints "listening on HOST:PORT" on stdout once it accepts connections.

    options:
      --host HOST            address to bind (default 127.0.0.1)
      --port PORT            TCP port; 0 picks a free one (default 7420)
      --data-dir PATH        data directory, created if missing and locked while the
                             server runs (default ./data): snapshots and the log
      --fsync POLICY         when the log is fsynced: always (an answer to a change
                             leaves only once it is on disk; concurrent changes share
                             one fsync), everysec (a crash may lose the last second),
                             no (the OS decides) (default everysec)
      --snapshot-after N     write a snapshot in the background after N logged
                             changes, then drop the log before it (default 1000000)
      --threads N            event-loop threads (default: one per core)
      --max-connections N    connections open at once (default 10000)
      --max-frame BYTES      largest frame accepted (default 4194304)
      --max-page-rows N      largest GET_PAGE limit (default 1000)
      --max-text BYTES       longest text, name or icon (default 4096)
      --max-batch N          most operations in one PATCH (default 1000)
      --seed-demo            fill an empty store with the apps' demo lists
      --tokens FILE          require a token in HELLO: FILE has one "TOKEN NAMESPACE"
                             pair per line ('#' starts a comment); SIGHUP reloads it
      --insecure-bind        allow a non-loopback --host without --tokens
      --idle-timeout SECONDS close a connection that sends nothing for this long (after
                             ERROR LIMIT_EXCEEDED idleTimeout), or that reads none of
                             the answers it is owed for this long (default 0: never)
      --max-in-flight N      requests of one connection worked on at once; more wait
                             unread until answers go out (default 1024)
      --max-output-bytes B   unread answers a connection may hold before it is dropped
                             (default 67108864; at least --max-frame + 65536)
      --metrics-port PORT    serve the STATS figures as Prometheus text at
                             http://HOST:PORT/metrics (0 picks a port; default off)
      --metrics-host HOST    address of the metrics endpoint (default 127.0.0.1)
      --slow-request-ms MS   log requests that take longer (default 100)
      --log-level LEVEL      debug, info, warn or error (default info)
      --retain-changes N     changes kept per list for CHANGES_SINCE and catch-up
                             (default 1000; 0 keeps none)
      --retain-bytes BYTES   encoded changes kept for all lists together, oldest
                             dropped first (default 67108864)
      --max-push-buffer BYTES  pushes a subscriber may leave unread before its
                             subscriptions are dropped (default 4194304)
      --max-import-bytes B   most uncompressed bytes one IMPORT may carry; its lists are
                             staged in memory (about 1.7 x B) until applied (default 1073741824,
                             at most 4026531840: an import is logged as one record)
      --transfer-threads N   threads that make EXPORT chunks and decode and apply IMPORT
                             chunks, off the event loops: at most N chunks are worked
                             on at once, the others wait their turn (default 2)
      -h, --help             show this help

    SIGINT or SIGTERM stops accepting, answers requests in flight and exits 0.
    Events are logged on stderr, one line each: level=LEVEL event=NAME key=value ...
    With --metrics-port, "checklistd: metrics on http://HOST:PORT/metrics" is
    printed on stdout before the "listening on" line.
    Without --tokens every client shares one namespace and only a loopback
    --host is allowed (unless --insecure-bind). The protocol is plain TCP: put a
    TLS-terminating proxy in front for other networks (README.md).
    """

    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    static func parse(_ arguments: [String]) throws -> Options? {
        var options = Options()
        var rest = arguments[...]
        func value(_ flag: String) throws -> String {
            guard let v = rest.popFirst() else { throw UsageError(description: "\(flag) needs a value") }
            return v
        }
        func number<T: FixedWidthInteger>(_ flag: String, _: T.Type, min: T = 0, max: T = .max) throws -> T {
            let text = try value(flag)
            guard let n = T(text), n >= min else { throw UsageError(description: "\(flag): '\(text)' is not a valid number") }
            guard n <= max else { throw UsageError(description: "\(flag): \(n) is above the most allowed, \(max)") }
            return n
        }
        while let arg = rest.popFirst() {
            switch arg {
            case "-h", "--help": return nil
            case "--host": options.configuration.host = try value(arg)
            case "--port": options.configuration.port = try number(arg, UInt16.self)
            case "--data-dir": options.configuration.dataDirectory = try value(arg)
            case "--threads": options.configuration.threads = try number(arg, Int.self, min: 1)
            case "--max-connections": options.configuration.maxConnections = try number(arg, Int.self, min: 1)
            case "--max-frame": options.configuration.limits.maxFrameBytes = try number(arg, UInt32.self, min: 1024)
            case "--max-page-rows": options.configuration.limits.maxPageRows = try number(arg, UInt32.self, min: 1)
            case "--max-text": options.configuration.limits.maxTextBytes = try number(arg, UInt32.self, min: 1)
            case "--max-batch": options.configuration.limits.maxBatchOps = try number(arg, UInt32.self, min: 1)
            case "--seed-demo": options.seedDemo = true
            case "--fsync":
                let text = try value(arg)
                guard let policy = FsyncPolicy(rawValue: text) else {
                    throw UsageError(description: "--fsync is always, everysec or no, not '\(text)'")
                }
                options.fsync = policy
            case "--snapshot-after": options.snapshotAfter = try number(arg, UInt64.self, min: 1)
            case "--retain-changes": options.configuration.liveSync.retainChangesPerList = try number(arg, Int.self)
            case "--retain-bytes": options.configuration.liveSync.maxRetainedBytes = try number(arg, Int.self)
            case "--max-push-buffer": options.configuration.liveSync.maxPushBufferBytes = try number(arg, Int.self, min: 1024)
            case "--max-import-bytes":
                options.configuration.snapshots.maxImportBytes = try number(arg, UInt64.self, min: 1024,
                                                                            max: LogRecordFormat.maxImportRawBytes)
            case "--transfer-threads": options.configuration.snapshots.workerThreads = try number(arg, Int.self, min: 1)
            case "--tokens": options.tokensFile = try value(arg)
            case "--insecure-bind": options.insecureBind = true
            case "--idle-timeout":
                let text = try value(arg)
                guard let seconds = Double(text), seconds >= 0, seconds <= 1e9 else {
                    throw UsageError(description: "\(arg): '\(text)' is not a number of seconds")
                }
                options.configuration.idleTimeout = seconds == 0 ? nil : .milliseconds(Int64((seconds * 1000).rounded(.up)))
            case "--max-in-flight": options.configuration.maxInFlight = try number(arg, Int.self, min: 1)
            case "--max-output-bytes": options.configuration.maxOutputBytes = try number(arg, Int.self, min: 1)
            case "--metrics-port": options.configuration.metricsPort = try number(arg, UInt16.self)
            case "--metrics-host": options.configuration.metricsHost = try value(arg)
            case "--slow-request-ms": options.configuration.slowRequestThreshold = .milliseconds(try number(arg, Int64.self))
            case "--log-level":
                let text = try value(arg)
                guard let level = LogLevel(name: text) else {
                    throw UsageError(description: "\(arg): '\(text)' is not debug, info, warn or error")
                }
                options.configuration.logLevel = level
            default: throw UsageError(description: "unknown option '\(arg)'")
            }
        }
        let configuration = options.configuration
        let smallestOutputLimit = Int(configuration.limits.maxFrameBytes) + 64 * 1024
        guard configuration.maxOutputBytes >= smallestOutputLimit else {
            throw UsageError(description: "--max-output-bytes must be at least --max-frame + 65536 (\(smallestOutputLimit)): "
                             + "one answer may be that large")
        }
        if configuration.metricsPort != nil && !AccessControl.isLoopback(host: configuration.metricsHost) && !options.insecureBind {
            throw UsageError(description: "--metrics-host \(configuration.metricsHost) is not loopback: the metrics endpoint has "
                             + "no access control; add --insecure-bind to serve it there anyway")
        }
        return options
    }
}
