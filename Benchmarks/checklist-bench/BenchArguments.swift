import ChecklistCommandLine
import ChecklistTLS

/// A scenario's parsed command line, read by the option's name without its
/// dashes (`int("items", default: 1_000_000)`): the defaults stand beside
/// the code that uses them, the names and help in the scenario's `spec`.
struct BenchArguments {
    let parsed: ParsedCommandLine

    init(_ parsed: ParsedCommandLine) { self.parsed = parsed }

    /// Parses `arguments` as given after the name of scenario `spec`.
    init(_ arguments: [String], _ spec: CommandSpec) throws(UsageError) {
        parsed = try CommandLineParser.parse([spec.name] + arguments, BenchCommand.top)
    }

    func flag(_ name: String) -> Bool { parsed.flag("--" + name) }

    func string(_ name: String) -> String? { parsed.string("--" + name) }

    func int(_ name: String, default fallback: Int, min: Int = 0) throws(UsageError) -> Int {
        try parsed.integer("--" + name, Int.self, min: min) ?? fallback
    }

    func double(_ name: String, default fallback: Double) throws(UsageError) -> Double {
        try parsed.positiveNumber("--" + name) ?? fallback
    }

    /// A usage error about this command line, with the scenario's usage.
    func error(_ message: String) -> UsageError { parsed.error(message) }

    /// Whether any TLS option was given.
    var usesTLS: Bool { TLSClientOptions.given(parsed) }

    /// `--tls` and the `--tls-*` options as given (no environment variables:
    /// the bench reads none), their combination checked.
    func tlsOptions() throws(UsageError) -> TLSClientOptions {
        let options = TLSClientOptions(parsed)
        do throws(UsageError) {
            _ = try options.configuration()
        } catch {
            throw error.withUsage(parsed.usage)
        }
        return options
    }
}

/// A scenario that could not run or whose figures are wrong (exit status 1):
/// not a usage error.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String
}

/// The options several scenarios share.
enum BenchOptions {
    static let json = OptionSpec.flag("--json", "print one JSON object instead of the table (keys in Benchmarks/README.md)")
    static let server = OptionSpec.value("--server", "HOST:PORT[,HOST:PORT...]",
                                         "use running servers (nodes of one service, tried in turn)\n"
                                         + "instead of starting a checklistd on 127.0.0.1 port 0")
    static let postgres = OptionSpec.value("--postgres", "CONNINFO", "the bench's own checklistd keeps its data in PostgreSQL")
    static let nodes = OptionSpec.value("--nodes", "N", "with --postgres: N nodes on that one database (default 1)")
    static func textBytes(_ fallback: Int) -> OptionSpec {
        .value("--text-bytes", "N", "bytes of text of each item (default \(fallback))")
    }
    /// `--tls` and the `--tls-*` options, as the bench reads them.
    static let tls: [OptionSpec] = [
        .flag("--tls", "every connection speaks TLS; with no --server, the bench's own\n"
              + "checklistd gets throwaway certificates (made with openssl)"),
        .value("--tls-ca", "FILE", "with --server: the CA to trust (default: the system's)"),
        .value("--tls-server-name", "NAME", "with --server: the name the certificate must carry"),
        .value("--tls-cert", "FILE", "with --server: a client certificate (mutual TLS)"),
        .value("--tls-key", "FILE", "with --server: the client certificate's private key"),
    ]
}

private let details = """
Runs one scenario and prints a table, or one JSON object with --json (keys in
Benchmarks/README.md), including toolCpuUsPerRequest: this tool's own CPU time
per request, to tell when the tool is the limit.

Scenarios that need a server start their own checklistd (the one built next to
this binary) on 127.0.0.1 port 0 with a temporary data directory (on PostgreSQL
with --postgres CONNINFO), unless --server names running ones. With --tls every
connection speaks TLS. 'checklist-bench SCENARIO --help' lists the options of
one scenario with their defaults.
"""

/// `checklist-bench`'s command line: the scenarios (each one's options in its own file).
enum BenchCommand {
    static let top = CommandSpec(
        name: "checklist-bench", details: details,
        subcommands: [CodecScenario.spec, PagesScenario.spec, ScrollScenario.spec, LoadScenario.spec, SnapshotScenario.spec,
                      RestartScenario.spec, HelloScenario.spec, RateScenario.spec, MemoryScenario.spec, FanoutScenario.spec, FailoverScenario.spec, CacheScenario.spec, WebSocketScenario.spec,
                      PgbenchScenario.spec],
        subcommandNoun: "scenario")
}
