import ChecklistStorage
import ChecklistLog
import ChecklistCommandLine
import ChecklistJWT
import ChecklistPersistence
import ChecklistServer
import ChecklistTLS
import Foundation

/// `checklistd`'s command line: the server's options (each declared once, in
/// `Options+Table.swift`, with its help and effect) and the offline
/// `export` and `import` (OfflineCommands.swift).
struct Options {
    var configuration = ServerConfiguration()
    var seedDemo = false
    /// When the write-ahead log is fsynced.
    var fsync: FsyncPolicy = .everysec
    /// `--snapshot-after`, `--snapshot-growth`: when a background snapshot is written.
    var snapshots = SnapshotPolicy()
    /// `--postgres-statement-timeout`, `--postgres-checkpoint-after`; the
    /// retention follows `--retain-changes` (applied in `StorageChoice`).
    var postgresSettings = PostgresSettings()
    /// `--tokens FILE`: access control (Protocol/SPEC.md section 2).
    var tokensFile: String?
    /// `--auth-keys FILE`: accept signed tokens (JWT) signed by a key of this JWK Set.
    var authKeysFile: String?
    /// `--auth-issuer`, `--auth-audience`, `--auth-namespace-claim`, `--auth-leeway`.
    var authExpectations = TokenVerifier.Expectations()
    /// `--rate-burst`: the bucket of `--rate-limit` (default: one second's requests).
    var rateBurst: Int?
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

    /// The options, for `parse` and `--help`.
    static let command = CommandSpec(
        name: "checklistd",
        details: """
        Serves checklists over the Checklists binary protocol v1 (Protocol/SPEC.md).
        Prints "checklistd: listening on HOST:PORT" on stdout once it accepts connections.
        """,
        options: table.map(\.spec),
        subcommands: [OfflineCommands.export, OfflineCommands.import],
        runsAlone: true,
        epilogue: """
        SIGINT or SIGTERM stops accepting, answers requests in flight and exits 0.
        Events are logged on stderr, one line each: level=LEVEL event=NAME key=value ...
        With --metrics-port, "checklistd: metrics on http://HOST:PORT/metrics" is
        printed on stdout before the "listening on" line.
        Without --tokens every client shares one namespace and only a loopback
        --host is allowed (unless --insecure-bind or --tls-client-ca). Without --tls-cert the protocol
        is plain TCP: use TLS (or a TLS-terminating proxy) for other networks (README.md).
        SIGHUP re-reads the --tokens file, the --auth-keys file and the TLS certificate and key: new
        connections get the new pair, open ones keep theirs; a file that does not
        load keeps the old one (logged). TLS failures are logged as event=tls_failed
        (reason=not_tls, handshake_failed, handshake_truncated, handshake_timeout,
        record_error) and a TLS handshake on a plaintext port as event=tls_on_plain_port.
        Environment: on Linux it first starts itself again with glibc.malloc.tcache_count=1024
        added to GLIBC_TUNABLES (same pid), unless GLIBC_TUNABLES sets tcache_count already.
        Exit status: 0 stopped by a signal, 1 failed, 2 bad usage, 3 PostgreSQL cannot
        be reached at start.
        """)

    /// The server's options `arguments` give, or nil for `--help`.
    /// - Throws: `UsageError` for an unknown option, a bad value, a
    ///   combination the server refuses, or `export`/`import` (not a server start).
    static func parse(_ arguments: [String]) throws(UsageError) -> Options? {
        let parsed = try CommandLineParser.parse(arguments, command)
        if parsed.helpRequested { return nil }
        return try Options(parsed)
    }

    /// The server's options of `parsed` (no subcommand).
    init(_ parsed: ParsedCommandLine) throws(UsageError) {
        if let subcommand = parsed.subcommand { throw parsed.error("'\(subcommand.name)' does not start a server") }
        try parsed.apply(Self.table, to: &self)
        if postgres == nil, let conninfo = ProcessInfo.processInfo.environment["CHECKLIST_POSTGRES"], !conninfo.isEmpty {
            postgres = conninfo
        }
        do throws(UsageError) {
            try checkCombination()
        } catch {
            throw error.withUsage(parsed.usage)
        }
        if let rate = configuration.rateLimit, let burst = rateBurst {
            configuration.rateLimit = RateLimiter.Settings(requestsPerSecond: rate.requestsPerSecond, burst: Double(burst))
        }
    }

    /// Refuses option values that are fine alone but not together.
    private func checkCombination() throws(UsageError) {
        if postgres != nil && dataDirectoryGiven {
            throw UsageError("--data-dir and --postgres (or CHECKLIST_POSTGRES) exclude each other: "
                             + "the data lives in one place")
        }
        if rateBurst != nil && configuration.rateLimit == nil {
            throw UsageError("--rate-burst needs --rate-limit")
        }
        if authKeysFile == nil && authExpectations != TokenVerifier.Expectations() {
            throw UsageError("--auth-issuer, --auth-audience, --auth-namespace-claim and --auth-leeway need --auth-keys")
        }
        if cacheBytes != nil && postgres == nil {
            throw UsageError("--cache-bytes needs --postgres (or CHECKLIST_POSTGRES): "
                             + "the data directory keeps every list in memory")
        }
        switch (tlsCertificateFile, tlsKeyFile) {
        case (_?, nil): throw UsageError("--tls-cert needs --tls-key")
        case (nil, _?): throw UsageError("--tls-key needs --tls-cert")
        case (nil, nil):
            if tlsClientCAFile != nil { throw UsageError("--tls-client-ca needs --tls-cert and --tls-key") }
            if plainPort != nil { throw UsageError("--plain-port needs --tls-cert and --tls-key (--port is plaintext already)") }
        default: break
        }
        let smallestOutputLimit = Int(configuration.limits.maxFrameBytes) + 64 * 1024
        guard configuration.maxOutputBytes >= smallestOutputLimit else {
            throw UsageError("--max-output-bytes must be at least --max-frame + 65536 (\(smallestOutputLimit)): "
                             + "one answer may be that large")
        }
        if configuration.metricsPort != nil && !AccessControl.isLoopback(host: configuration.metricsHost) && !insecureBind {
            throw UsageError("--metrics-host \(configuration.metricsHost) is not loopback: the metrics endpoint has "
                             + "no access control; add --insecure-bind to serve it there anyway")
        }
    }
}
