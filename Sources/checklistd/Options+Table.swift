import ChecklistCommandLine
import ChecklistJWT
import ChecklistLog
import ChecklistPersistence
import ChecklistServer

/// Every option of the server, in the order of `checklistd --help`: its
/// name, value, help and what it sets. Adding an option is adding a line here.
extension Options {
    static let table: [BoundOption<Options>] = network + storage + limits + access + web + observability

    /// Where it listens.
    private static let network: [BoundOption<Options>] = [
        .value("--host", "HOST", "address to bind (default 127.0.0.1)") { $0.configuration.host = $1.text },
        .value("--port", "PORT", "TCP port; 0 picks a free one (default 7420)") { $0.configuration.port = try $1.integer() },
    ]

    /// The data directory or PostgreSQL, the log, snapshots.
    private static let storage: [BoundOption<Options>] = [
        .value("--data-dir", "PATH", """
            data directory, created if missing and locked while the
            server runs (default ./data): snapshots and the log
            """) {
            $0.configuration.dataDirectory = $1.text
            $0.dataDirectoryGiven = true
        },
        .value("--postgres", "CONNINFO", """
            keep the data in PostgreSQL instead (a libpq connection
            string or postgresql:// URI; CHECKLIST_POSTGRES does the
            same and keeps a password off the command line): the
            schema is created or migrated, every list's summary
            loaded (its rows on first use), and an answer to a change
            leaves once its transaction committed. Not together with
            --data-dir. Exits 3 when PostgreSQL cannot be reached at
            start
            """) { $0.postgres = $1.text },
        .value("--postgres-statement-timeout", "SECONDS", """
            statement_timeout of the node's database
            threads: a commit stuck longer fails (its changes are
            answered ERROR UNAVAILABLE, outcome unknown, and tried
            again) instead of holding answers (default 30; 0: none)
            """) { $0.postgresSettings.statementTimeout = try $1.duration() },
        .value("--postgres-checkpoint-after", "N", """
            write a list's checkpoint in the background once
            it has N changes after its last one, so a start replays
            at most about N changes per list (default 1000)
            """) { $0.postgresSettings.checkpointAfter = try $1.integer(min: 1) },
        .value("--cache-bytes", "SIZE", """
            with --postgres: memory for lists' rows (e.g. 64MB, 2GB;
            default 1GB); the least recently used idle lists are
            dropped and loaded again on their next use, and a list
            larger than this still works. The data directory keeps
            every list in memory, so not without --postgres
            """) { $0.cacheBytes = try $1.bytes(min: 1) },
        .value("--fsync", "POLICY", """
            when the log is fsynced: always (an answer to a change
            leaves only once it is on disk; concurrent changes share
            one fsync), everysec (a crash may lose the last second),
            no (the OS decides) (default everysec)
            """) { $0.fsync = FsyncPolicy(rawValue: try $1.choice(["always", "everysec", "no"]))! },
        .value("--snapshot-after", "N", """
            write a snapshot in the background after N logged
            changes, then drop the log before it (default 1000000)
            """) { $0.snapshots.records = try $1.integer(min: 1) },
        .value("--snapshot-growth", "PERCENT", """
            and not before the log has grown by PERCENT% of the
            items the last snapshot held, so that snapshots of a
            large store stay rare; 0: N changes alone (default 50)
            """) { $0.snapshots.growthPercent = try $1.integer(max: 10_000) },
        .flag("--seed-demo", """
            fill an empty store with the apps' demo lists (on
            PostgreSQL: only a database that never held a list)
            """) { $0.seedDemo = true },
        .value("--retain-changes", "N", """
            changes kept per list for CHANGES_SINCE and catch-up
            (default 1000; 0 keeps none)
            """) { $0.configuration.liveSync.retainChangesPerList = try $1.integer() },
        .value("--retain-bytes", "BYTES", """
            encoded changes kept for all lists together, oldest
            dropped first (default 67108864; held deflated
            from 256 bytes a change, so they take less)
            """) { $0.configuration.liveSync.maxRetainedBytes = try $1.integer() },
        .value("--max-import-bytes", "B", """
            most uncompressed bytes one IMPORT may carry; its lists are
            staged in memory (about 1.7 x B) until applied (default 1073741824,
            at most 4026531840: an import is logged as one record)
            """) { $0.configuration.snapshots.maxImportBytes = try $1.integer(min: 1024, max: LogRecordFormat.maxImportRawBytes) },
        .value("--transfer-threads", "N", """
            threads that make EXPORT chunks and decode and apply IMPORT
            chunks, off the event loops: at most N chunks are worked
            on at once, the others wait their turn (default 2)
            """) { $0.configuration.snapshots.workerThreads = try $1.integer(min: 1) },
        .value("--import-inflate-threads", "N", """
            threads that inflate the gzip members of IMPORT streams
            and decode their records, shared by all imports (default
            one per core, at most 16; 0 inflates and decodes each
            import as one stream on its transfer thread)
            """) { $0.configuration.snapshots.importInflateThreads = try $1.integer() },
    ]

    /// The protocol limits (announced in HELLO_OK) and the load limits of
    /// one connection (Protocol/SPEC.md section 4).
    private static let limits: [BoundOption<Options>] = [
        .value("--threads", "N", "event-loop threads (default: one per core)") { $0.configuration.threads = try $1.integer(min: 1) },
        .value("--max-connections", "N", "connections open at once (default 10000)") {
            $0.configuration.maxConnections = try $1.integer(min: 1)
        },
        .value("--max-frame", "BYTES", "largest frame accepted (default 4194304)") {
            $0.configuration.limits.maxFrameBytes = try $1.integer(min: 1024)
        },
        .value("--max-page-rows", "N", "largest GET_PAGE limit (default 1000)") {
            $0.configuration.limits.maxPageRows = try $1.integer(min: 1)
        },
        .value("--max-text", "BYTES", "longest text, name or icon (default 4096)") {
            $0.configuration.limits.maxTextBytes = try $1.integer(min: 1)
        },
        .value("--max-batch", "N", "most operations in one PATCH (default 1000)") {
            $0.configuration.limits.maxBatchOps = try $1.integer(min: 1)
        },
        .value("--idle-timeout", "SECONDS", """
            close a connection that sends nothing for this long (after
            ERROR LIMIT_EXCEEDED idleTimeout), or that reads none of
            the answers it is owed for this long (default 0: never)
            """) { $0.configuration.idleTimeout = try $1.duration() },
        .value("--max-in-flight", "N", """
            requests of one connection worked on at once; more wait
            unread until answers go out (default 1024)
            """) { $0.configuration.maxInFlight = try $1.integer(min: 1) },
        .value("--max-output-bytes", "B", """
            unread answers a connection may hold before it is dropped
            (default 67108864; at least --max-frame + 65536)
            """) { $0.configuration.maxOutputBytes = try $1.integer(min: 1) },
        .value("--max-push-buffer", "BYTES", """
            pushes a subscriber may leave unread before its
            subscriptions are dropped (default 4194304)
            """) { $0.configuration.liveSync.maxPushBufferBytes = try $1.integer(min: 1024) },
        .value("--quota-lists", "N", """
            lists a namespace may hold: a CREATE_LIST past it is answered
            ERROR QUOTA_EXCEEDED lists (default: none)
            """) { $0.configuration.quotas.lists = try $1.integer() },
        .value("--quota-items", "N", """
            items a namespace may hold over all its lists: a PATCH that
            would pass it is refused whole (QUOTA_EXCEEDED items);
            deletions always work (default: none)
            """) { $0.configuration.quotas.items = try $1.integer() },
        .value("--quota-bytes", "SIZE", """
            bytes of list names, icons, item texts and client keys a
            namespace may hold (UTF-8; e.g. 64MB, 1GB): a change or
            import that would pass it is refused whole (QUOTA_EXCEEDED
            bytes); deletions always work (default: none)
            """) { $0.configuration.quotas.bytes = try $1.bytes() },
    ]

    /// Who may connect: tokens and TLS.
    private static let access: [BoundOption<Options>] = [
        .value("--tokens", "FILE", """
            require a token in HELLO: FILE has one "TOKEN NAMESPACE"
            pair per line ('#' starts a comment); SIGHUP reloads it
            """) { $0.tokensFile = $1.text },
        .value("--auth-keys", "FILE", """
            also accept signed tokens (JWT) in HELLO: FILE is a JWK Set
            (RFC 7517) of the keys that may sign them, chosen by kid:
            RSA (RS256), EC P-256 (ES256), OKP Ed25519 (EdDSA), oct
            (HS256); SIGHUP reloads it (docs/ACCESS.md)
            """) { $0.authKeysFile = $1.text },
        .value("--auth-issuer", "ISS", "with --auth-keys: a token's iss must be ISS") {
            $0.authExpectations.issuer = $1.text
        },
        .value("--auth-audience", "AUD", "with --auth-keys: a token's aud must name AUD") {
            $0.authExpectations.audience = $1.text
        },
        .value("--auth-namespace-claim", "NAME", "the claim whose value is the namespace (default sub)") {
            guard !$1.text.isEmpty else { throw $1.error("needs a claim name") }
            $0.authExpectations.namespaceClaim = $1.text
        },
        .value("--auth-leeway", "SECONDS", "clock difference allowed for exp, nbf and iat (default 60)") {
            $0.authExpectations.leewaySeconds = try $1.seconds()
        },
        .flag("--insecure-bind", """
            allow a non-loopback --host without --tokens (or
            --tls-client-ca), and a non-loopback --plain-port
            """) { $0.insecureBind = true },
        .value("--tls-cert", "FILE", """
            make --port a TLS port (TLS 1.2 and 1.3): FILE is the PEM
            certificate, optionally followed by its chain; needs --tls-key
            """) { $0.tlsCertificateFile = $1.text },
        .value("--tls-key", "FILE", "the certificate's PEM private key (unencrypted)") { $0.tlsKeyFile = $1.text },
        .value("--tls-client-ca", "FILE", """
            require a client certificate signed by a CA in this PEM file
            (mutual TLS); with --tokens, a "cert:SUBJECT NAMESPACE" line
            lets a certificate stand in for a token
            """) { $0.tlsClientCAFile = $1.text },
        .value("--tls-handshake-timeout", "SECONDS", """
            close a TLS connection whose handshake has not
            completed in this time (default 10)
            """) { $0.tlsHandshakeTimeout = try $1.duration(positive: true)! },
        .value("--plain-port", "PORT", """
            with --tls-cert: also serve plaintext on this port (0 picks
            one), on 127.0.0.1 unless --insecure-bind (then on --host);
            "checklistd: plaintext on HOST:PORT" is printed before the
            "listening on" line
            """) { $0.plainPort = try $1.integer() },
        .value("--rate-limit", "N", """
            requests a second per namespace (all its connections; without
            access control, of everyone): more are answered ERROR
            RATE_LIMITED with the milliseconds to wait (default: none)
            """) { $0.configuration.rateLimit = RateLimiter.Settings(requestsPerSecond: try $1.seconds(positive: true)) },
        .value("--rate-burst", "N", """
            requests a namespace may send at once after a quiet time
            (default: one second's worth of --rate-limit)
            """) { $0.rateBurst = try $1.integer(min: 1) },
    ]

    /// Metrics and the event log.
    private static let observability: [BoundOption<Options>] = [
        .value("--metrics-port", "PORT", """
            serve the STATS figures as Prometheus text at
            http://HOST:PORT/metrics (0 picks a port; default off)
            """) { $0.configuration.metricsPort = try $1.integer() },
        .value("--metrics-host", "HOST", "address of the metrics endpoint (default 127.0.0.1)") {
            $0.configuration.metricsHost = $1.text
        },
        .value("--slow-request-ms", "MS", "log requests that take longer (default 100)") {
            $0.configuration.slowRequestThreshold = .milliseconds(try $1.integer() as Int64)
        },
        .value("--log-level", "LEVEL", "debug, info, warn or error (default info)") {
            guard let level = LogLevel(name: $1.text) else { throw $1.error("'\($1.text)' is not debug, info, warn or error") }
            $0.configuration.logLevel = level
        },
    ]
}
