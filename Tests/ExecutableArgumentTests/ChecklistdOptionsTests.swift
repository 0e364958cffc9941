import ChecklistPersistence
import ChecklistServer
import ChecklistStorage
import ChecklistCommandLine
@testable import checklistd
import Testing

/// `checklistd`'s `Options.parse`: every group of options, the defaults,
/// and each kind of usage error.
@Suite(.timeLimit(.minutes(10)))
struct ChecklistdOptionsTests {
    @Test func noArgumentsGiveTheDefaults() throws {
        let options = try #require(try Options.parse([]))
        #expect(options.configuration.host == "127.0.0.1" && options.configuration.port == 7420)
        #expect(options.fsync == .everysec && options.snapshots == SnapshotPolicy(records: 1_000_000, growthPercent: 50))
        #expect(!options.seedDemo && options.tokensFile == nil && !options.insecureBind)
        #expect(options.configuration.idleTimeout == nil)
    }

    @Test(arguments: [["--help"], ["-h"], ["--port", "1", "--help", "--bogus"]])
    func helpStopsParsing(arguments: [String]) throws {
        #expect(try Options.parse(arguments) == nil)
    }

    @Test func everyGroupOfOptionsIsApplied() throws {
        let options = try #require(try Options.parse([
            "--host", "::1", "--port", "0", "--threads", "3", "--tokens", "/t", "--insecure-bind",
            "--max-connections", "5", "--max-frame", "2048", "--max-page-rows", "7", "--max-text", "9",
            "--max-batch", "11", "--idle-timeout", "1.5", "--max-in-flight", "13", "--max-output-bytes", "200000",
            "--data-dir", "/d", "--seed-demo", "--fsync", "always", "--snapshot-after", "17", "--snapshot-growth", "0",
            "--retain-changes", "0", "--retain-bytes", "19", "--max-push-buffer", "4096",
            "--max-import-bytes", "2048", "--transfer-threads", "4", "--import-inflate-threads", "0",
            "--metrics-port", "0", "--metrics-host", "10.0.0.1", "--slow-request-ms", "5", "--log-level", "debug",
        ]))
        let c = options.configuration
        #expect(c.host == "::1" && c.port == 0 && c.threads == 3 && options.tokensFile == "/t" && options.insecureBind)
        #expect(c.maxConnections == 5 && c.limits.maxFrameBytes == 2048 && c.limits.maxPageRows == 7)
        #expect(c.limits.maxTextBytes == 9 && c.limits.maxBatchOps == 11 && c.maxInFlight == 13)
        #expect(c.idleTimeout == .milliseconds(1500) && c.maxOutputBytes == 200_000)
        #expect(c.dataDirectory == "/d" && options.seedDemo && options.fsync == .always && options.snapshots == SnapshotPolicy(records: 17, growthPercent: 0))
        #expect(c.liveSync.retainChangesPerList == 0 && c.liveSync.maxRetainedBytes == 19)
        #expect(c.liveSync.maxPushBufferBytes == 4096 && c.snapshots.maxImportBytes == 2048 && c.snapshots.workerThreads == 4)
        #expect(c.snapshots.importInflateThreads == 0)
        #expect(c.metricsPort == 0 && c.metricsHost == "10.0.0.1" && c.slowRequestThreshold == .milliseconds(5))
        #expect(c.logLevel == .debug)
    }

    @Test func anIdleTimeoutOfZeroMeansNone() throws {
        let options = try #require(try Options.parse(["--idle-timeout", "0"]))
        #expect(options.configuration.idleTimeout == nil)
        let rounded = try #require(try Options.parse(["--idle-timeout", "0.0001"]))
        #expect(rounded.configuration.idleTimeout == .milliseconds(1))
    }

    @Test(arguments: [
        (["--bogus"], "unknown option --bogus"),
        (["--port"], "option --port needs a value"),
        (["--port", "70000"], "--port: '70000' is not a whole number from 0 to 65535"),
        (["--port", "-1"], "--port: '-1' is not a whole number from 0 to 65535"),
        (["--max-frame", "1023"], "--max-frame: '1023' is not a whole number from 1024 to 4294967295"),
        (["--threads", "0"], "--threads: '0' is not a whole number from 1"),
        (["--max-import-bytes", "4026531841"], "--max-import-bytes: '4026531841' is not a whole number from 1024 to 4026531840"),
        (["--fsync", "sometimes"], "--fsync: 'sometimes' is not always, everysec or no"),
        (["--log-level", "loud"], "--log-level: 'loud' is not debug, info, warn or error"),
        (["--idle-timeout", "-2"], "--idle-timeout: '-2' is not a number of seconds"),
        (["--idle-timeout", "soon"], "--idle-timeout: 'soon' is not a number of seconds"),
        (["--max-frame", "1048576", "--max-output-bytes", "1000000"],
         "--max-output-bytes must be at least --max-frame + 65536 (1114112): one answer may be that large"),
        (["--tls-cert", "c.pem"], "--tls-cert needs --tls-key"),
        (["--tls-key", "k.pem"], "--tls-key needs --tls-cert"),
        (["--tls-client-ca", "ca.pem"], "--tls-client-ca needs --tls-cert and --tls-key"),
        (["--plain-port", "7419"], "--plain-port needs --tls-cert and --tls-key (--port is plaintext already)"),
        (["--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-handshake-timeout", "0"],
         "--tls-handshake-timeout: '0' is not a number of seconds above 0"),
    ] as [([String], String)])
    func badArgumentsAreUsageErrors(arguments: [String], message: String) {
        #expect {
            _ = try Options.parse(arguments)
        } throws: { error in
            (error as? UsageError)?.message == message
        }
    }

    @Test func aMetricsHostOffLoopbackNeedsInsecureBind() throws {
        #expect(throws: UsageError.self) {
            _ = try Options.parse(["--metrics-port", "9100", "--metrics-host", "0.0.0.0"])
        }
        let allowed = try #require(try Options.parse(["--metrics-port", "9100", "--metrics-host", "0.0.0.0", "--insecure-bind"]))
        #expect(allowed.configuration.metricsPort == 9100)
        // Without --metrics-port the host is not used, so it is not checked.
        #expect(try Options.parse(["--metrics-host", "0.0.0.0"]) != nil)
    }

    /// `export` and `import` are subcommands of the same command line, not server options.
    @Test func theOfflineCommands() throws {
        let export = try CommandLineParser.parse(["export", "--data-dir", "/d", "--level", "9", "out.ckss"], Options.command)
        let arguments = try OfflineCommands.arguments(export)
        #expect(arguments.dataDirectory == "/d" && arguments.level == 9 && arguments.file == "out.ckss" && !arguments.replace)
        let replace = try OfflineCommands.arguments(try CommandLineParser.parse(["import", "--replace", "--postgres", "x", "-"],
                                                                                Options.command))
        #expect(replace.replace && replace.postgres == "x" && replace.file == "-")
        #expect(throws: UsageError("command 'export' has no option --replace")) {
            _ = try CommandLineParser.parse(["export", "--replace", "--data-dir", "/d", "f"], Options.command)
        }
        #expect(throws: UsageError("missing argument FILE")) {
            _ = try CommandLineParser.parse(["import", "--data-dir", "/d"], Options.command)
        }
        #expect(throws: UsageError("'export' does not start a server")) { _ = try Options.parse(["export", "f"]) }
    }

    @Test func tlsOptionsMakeATLSPort() throws {
        let options = try #require(try Options.parse(["--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-client-ca", "ca.pem",
                                                      "--tls-handshake-timeout", "2.5", "--plain-port", "7419",
                                                      "--host", "0.0.0.0"]))
        let files = try #require(options.tlsFiles)
        #expect(files.certificateFile == "c.pem" && files.privateKeyFile == "k.pem" && files.clientCAFile == "ca.pem")
        #expect(options.tlsHandshakeTimeout == .milliseconds(2500))
        #expect(options.plainPort == 7419)
        #expect(TLSSetup.plainHost(options) == "127.0.0.1", "the plaintext port stays on loopback")
        var insecure = options
        insecure.insecureBind = true
        #expect(TLSSetup.plainHost(insecure) == "0.0.0.0")
        #expect(try Options.parse([])?.tlsFiles == nil)
    }
}
