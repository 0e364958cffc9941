import ChecklistStorage
import ChecklistLog
import ChecklistPersistence
import ChecklistServer
import ChecklistTLS
import Foundation

/// `checklistd`'s command line.
struct Options {
    var configuration = ServerConfiguration()
    var seedDemo = false
    /// When the write-ahead log is fsynced.
    var fsync: FsyncPolicy = .everysec
    /// Log records after which a background snapshot is written.
    var snapshotAfter: UInt64 = 1_000_000
    /// `--postgres-statement-timeout`, `--postgres-checkpoint-after`; the
    /// retention follows `--retain-changes` (applied in `StorageChoice`).
    var postgresSettings = PostgresSettings()
    /// `--tokens FILE`: access control (Protocol/SPEC.md section 2).
    var tokensFile: String?
    /// `--insecure-bind`: allow a non-loopback host without `--tokens`.
    var insecureBind = false
    /// `--tls-cert`, `--tls-key`, `--tls-client-ca`: make `--port` a TLS port.
    var tlsCertificateFile: String?
    var tlsKeyFile: String?
    var tlsClientCAFile: String?
    /// `--tls-handshake-timeout`.
    var tlsHandshakeTimeout: Duration = .seconds(10)
    /// `--plain-port`: a plaintext port beside the TLS one.
    var plainPort: UInt16?

    /// The TLS files, when `--port` is a TLS port.
    var tlsFiles: TLSServerConfiguration? {
        guard let tlsCertificateFile, let tlsKeyFile else { return nil }
        return TLSServerConfiguration(certificateFile: tlsCertificateFile, privateKeyFile: tlsKeyFile,
                                      clientCAFile: tlsClientCAFile)
    }
    /// `--postgres CONNINFO` (or `CHECKLIST_POSTGRES`): keep the data in
    /// PostgreSQL instead of a data directory (StorageChoice.swift).
    var postgres: String?
    /// Whether `--data-dir` was given (refused together with `--postgres`).
    var dataDirectoryGiven = false
    /// `--cache-bytes`: the PostgreSQL node's budget for lists in memory
    /// (only with `--postgres`; default `ListCache.Configuration.defaultMaxBytes`).
    var cacheBytes: Int?

    static let usage = """
    usage: checklistd [options]
           checklistd export|import --data-dir DIR ... FILE   (server stopped; 'checklistd export --help')
           checklistd export|import --postgres CONNINFO ... FILE

    Serves checklists over the Checklists binary protocol v1 (Protocol/SPEC.md).
    Prints "checklistd: listening on HOST:PORT" on stdout once it accepts connections.

    options:
      --host HOST            address to bind (default 127.0.0.1)
      --port PORT            TCP port; 0 picks a free one (default 7420)
      --data-dir PATH        data directory, created if missing and locked while the
                             server runs (default ./data): snapshots and the log
      --postgres CONNINFO    keep the data in PostgreSQL instead (a libpq connection
                             string or postgresql:// URI; CHECKLIST_POSTGRES does the
                             same and keeps a password off the command line): the
                             schema is created or migrated, every list's summary
                             loaded (its rows on first use), and an answer to a change
                             leaves once its transaction committed. Not together with
                             --data-dir. Exits 3 when PostgreSQL cannot be reached at
                             start
      --postgres-statement-timeout SECONDS  statement_timeout of the node's database
                             threads: a commit stuck longer fails (its changes are
                             answered ERROR UNAVAILABLE, outcome unknown, and tried
                             again) instead of holding answers (default 30; 0: none)
      --postgres-checkpoint-after N  write a list's checkpoint in the background once
                             it has N changes after its last one, so a start replays
                             at most about N changes per list (default 1000)
      --cache-bytes SIZE     with --postgres: memory for lists' rows (e.g. 64MB, 2GB;
                             default 1GB); the least recently used idle lists are
                             dropped and loaded again on their next use, and a list
                             larger than this still works. The data directory keeps
                             every list in memory, so not without --postgres
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
      --seed-demo            fill an empty store with the apps' demo lists (on
                             PostgreSQL: only a database that never held a list)
      --tokens FILE          require a token in HELLO: FILE has one "TOKEN NAMESPACE"
                             pair per line ('#' starts a comment); SIGHUP reloads it
      --insecure-bind        allow a non-loopback --host without --tokens (or
                             --tls-client-ca), and a non-loopback --plain-port
      --tls-cert FILE        make --port a TLS port (TLS 1.2 and 1.3): FILE is the PEM
                             certificate, optionally followed by its chain; needs --tls-key
      --tls-key FILE         the certificate's PEM private key (unencrypted)
      --tls-client-ca FILE   require a client certificate signed by a CA in this PEM file
                             (mutual TLS); with --tokens, a "cert:SUBJECT NAMESPACE" line
                             lets a certificate stand in for a token
      --tls-handshake-timeout SECONDS  close a TLS connection whose handshake has not
                             completed in this time (default 10)
      --plain-port PORT      with --tls-cert: also serve plaintext on this port (0 picks
                             one), on 127.0.0.1 unless --insecure-bind (then on --host);
                             "checklistd: plaintext on HOST:PORT" is printed before the
                             "listening on" line
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
                             dropped first (default 67108864; held deflated
                             from 256 bytes a change, so they take less)
      --max-push-buffer BYTES  pushes a subscriber may leave unread before its
                             subscriptions are dropped (default 4194304)
      --max-import-bytes B   most uncompressed bytes one IMPORT may carry; its lists are
                             staged in memory (about 1.7 x B) until applied (default 1073741824,
                             at most 4026531840: an import is logged as one record)
      --transfer-threads N   threads that make EXPORT chunks and decode and apply IMPORT
                             chunks, off the event loops: at most N chunks are worked
                             on at once, the others wait their turn (default 2)
      --import-inflate-threads N
                             threads that inflate the gzip members of IMPORT streams
                             and decode their records, shared by all imports (default
                             one per core, at most 16; 0 inflates and decodes each
                             import as one stream on its transfer thread)
      -h, --help             show this help

    SIGINT or SIGTERM stops accepting, answers requests in flight and exits 0.
    Events are logged on stderr, one line each: level=LEVEL event=NAME key=value ...
    With --metrics-port, "checklistd: metrics on http://HOST:PORT/metrics" is
    printed on stdout before the "listening on" line.
    Without --tokens every client shares one namespace and only a loopback
    --host is allowed (unless --insecure-bind or --tls-client-ca). Without --tls-cert the protocol
    is plain TCP: use TLS (or a TLS-terminating proxy) for other networks (README.md).
    SIGHUP re-reads the --tokens file and the TLS certificate and key: new
    connections get the new pair, open ones keep theirs; a file that does not
    load keeps the old one (logged). TLS failures are logged as event=tls_failed
    (reason=not_tls, handshake_failed, handshake_truncated, handshake_timeout,
    record_error) and a TLS handshake on a plaintext port as event=tls_on_plain_port.
    """

    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    /// The options `arguments` give, or nil for `--help`.
    /// - Throws: `UsageError` for an unknown option, a bad value or a
    ///   combination the server refuses.
    static func parse(_ arguments: [String]) throws -> Options? {
        var options = Options()
        var cursor = ArgumentCursor(arguments)
        while let flag = cursor.next() {
            if flag == "-h" || flag == "--help" { return nil }
            let known = try options.applyNetworkOption(flag, &cursor)
                || options.applyLimitOption(flag, &cursor)
                || options.applyStorageOption(flag, &cursor)
                || options.applyObservabilityOption(flag, &cursor)
            guard known else { throw UsageError(description: "unknown option '\(flag)'") }
        }
        if options.postgres == nil, let conninfo = ProcessInfo.processInfo.environment["CHECKLIST_POSTGRES"], !conninfo.isEmpty {
            options.postgres = conninfo
        }
        try options.checkCombination()
        return options
    }

    /// Where it listens and who may connect.
    private mutating func applyNetworkOption(_ flag: String, _ cursor: inout ArgumentCursor) throws -> Bool {
        switch flag {
        case "--host": configuration.host = try cursor.value(flag)
        case "--port": configuration.port = try cursor.number(flag, UInt16.self)
        case "--threads": configuration.threads = try cursor.number(flag, Int.self, min: 1)
        case "--tokens": tokensFile = try cursor.value(flag)
        case "--insecure-bind": insecureBind = true
        case "--tls-cert": tlsCertificateFile = try cursor.value(flag)
        case "--tls-key": tlsKeyFile = try cursor.value(flag)
        case "--tls-client-ca": tlsClientCAFile = try cursor.value(flag)
        case "--tls-handshake-timeout":
            let seconds = try cursor.seconds(flag)
            guard seconds > 0 else { throw UsageError(description: "--tls-handshake-timeout must be more than 0") }
            tlsHandshakeTimeout = .milliseconds(Int64((seconds * 1000).rounded(.up)))
        case "--plain-port": plainPort = try cursor.number(flag, UInt16.self)
        default: return false
        }
        return true
    }

    /// The protocol limits (announced in HELLO_OK) and the load limits of
    /// one connection (Protocol/SPEC.md section 4).
    private mutating func applyLimitOption(_ flag: String, _ cursor: inout ArgumentCursor) throws -> Bool {
        switch flag {
        case "--max-connections": configuration.maxConnections = try cursor.number(flag, Int.self, min: 1)
        case "--max-frame": configuration.limits.maxFrameBytes = try cursor.number(flag, UInt32.self, min: 1024)
        case "--max-page-rows": configuration.limits.maxPageRows = try cursor.number(flag, UInt32.self, min: 1)
        case "--max-text": configuration.limits.maxTextBytes = try cursor.number(flag, UInt32.self, min: 1)
        case "--max-batch": configuration.limits.maxBatchOps = try cursor.number(flag, UInt32.self, min: 1)
        case "--idle-timeout":
            let seconds = try cursor.seconds(flag)
            configuration.idleTimeout = seconds == 0 ? nil : .milliseconds(Int64((seconds * 1000).rounded(.up)))
        case "--max-in-flight": configuration.maxInFlight = try cursor.number(flag, Int.self, min: 1)
        case "--max-output-bytes": configuration.maxOutputBytes = try cursor.number(flag, Int.self, min: 1)
        default: return false
        }
        return true
    }

    /// The data directory, its log and snapshots, retained changes and transfers.
    private mutating func applyStorageOption(_ flag: String, _ cursor: inout ArgumentCursor) throws -> Bool {
        switch flag {
        case "--data-dir":
            configuration.dataDirectory = try cursor.value(flag)
            dataDirectoryGiven = true
        case "--postgres": postgres = try cursor.value(flag)
        case "--postgres-statement-timeout":
            let seconds = try cursor.seconds(flag)
            postgresSettings.statementTimeout = seconds == 0 ? nil : .milliseconds(Int64((seconds * 1000).rounded(.up)))
        case "--postgres-checkpoint-after": postgresSettings.checkpointAfter = try cursor.number(flag, Int.self, min: 1)
        case "--cache-bytes": cacheBytes = try cursor.bytes(flag, min: 1)
        case "--seed-demo": seedDemo = true
        case "--fsync":
            let text = try cursor.value(flag)
            guard let policy = FsyncPolicy(rawValue: text) else {
                throw UsageError(description: "--fsync is always, everysec or no, not '\(text)'")
            }
            fsync = policy
        case "--snapshot-after": snapshotAfter = try cursor.number(flag, UInt64.self, min: 1)
        case "--retain-changes": configuration.liveSync.retainChangesPerList = try cursor.number(flag, Int.self)
        case "--retain-bytes": configuration.liveSync.maxRetainedBytes = try cursor.number(flag, Int.self)
        case "--max-push-buffer": configuration.liveSync.maxPushBufferBytes = try cursor.number(flag, Int.self, min: 1024)
        case "--max-import-bytes":
            configuration.snapshots.maxImportBytes = try cursor.number(flag, UInt64.self, min: 1024,
                                                                      max: LogRecordFormat.maxImportRawBytes)
        case "--transfer-threads": configuration.snapshots.workerThreads = try cursor.number(flag, Int.self, min: 1)
        case "--import-inflate-threads":
            configuration.snapshots.importInflateThreads = try cursor.number(flag, Int.self, min: 0)
        default: return false
        }
        return true
    }

    /// Metrics and the event log.
    private mutating func applyObservabilityOption(_ flag: String, _ cursor: inout ArgumentCursor) throws -> Bool {
        switch flag {
        case "--metrics-port": configuration.metricsPort = try cursor.number(flag, UInt16.self)
        case "--metrics-host": configuration.metricsHost = try cursor.value(flag)
        case "--slow-request-ms": configuration.slowRequestThreshold = .milliseconds(try cursor.number(flag, Int64.self))
        case "--log-level":
            let text = try cursor.value(flag)
            guard let level = LogLevel(name: text) else {
                throw UsageError(description: "\(flag): '\(text)' is not debug, info, warn or error")
            }
            configuration.logLevel = level
        default: return false
        }
        return true
    }

    /// Refuses option values that are fine alone but not together.
    private func checkCombination() throws {
        if postgres != nil && dataDirectoryGiven {
            throw UsageError(description: "--data-dir and --postgres (or CHECKLIST_POSTGRES) exclude each other: "
                             + "the data lives in one place")
        }
        if cacheBytes != nil && postgres == nil {
            throw UsageError(description: "--cache-bytes needs --postgres (or CHECKLIST_POSTGRES): "
                             + "the data directory keeps every list in memory")
        }
        switch (tlsCertificateFile, tlsKeyFile) {
        case (_?, nil): throw UsageError(description: "--tls-cert needs --tls-key")
        case (nil, _?): throw UsageError(description: "--tls-key needs --tls-cert")
        case (nil, nil):
            if tlsClientCAFile != nil { throw UsageError(description: "--tls-client-ca needs --tls-cert and --tls-key") }
            if plainPort != nil { throw UsageError(description: "--plain-port needs --tls-cert and --tls-key (--port is plaintext already)") }
        default: break
        }
        let smallestOutputLimit = Int(configuration.limits.maxFrameBytes) + 64 * 1024
        guard configuration.maxOutputBytes >= smallestOutputLimit else {
            throw UsageError(description: "--max-output-bytes must be at least --max-frame + 65536 (\(smallestOutputLimit)): "
                             + "one answer may be that large")
        }
        if configuration.metricsPort != nil && !AccessControl.isLoopback(host: configuration.metricsHost) && !insecureBind {
            throw UsageError(description: "--metrics-host \(configuration.metricsHost) is not loopback: the metrics endpoint has "
                             + "no access control; add --insecure-bind to serve it there anyway")
        }
    }
}
