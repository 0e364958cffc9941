import ChecklistCommandLine

/// `checklist-conformance`'s command line, parsed without side effects:
/// what to do, or the usage error to report.
struct Arguments: Equatable {
    /// What the command line asks for.
    enum Action: Equatable {
        case help
        /// Print the case ids and inputs.
        case list
        /// Print the catalogue as the SPEC.md table.
        case markdown
        /// Run the cases against `host`:`port`.
        case run(host: String, port: UInt16)
    }

    static let command = CommandSpec(
        name: "checklist-conformance",
        synopsis: ["checklist-conformance HOST:PORT [--token T] [--second-token U] [--idle SECONDS]",
                   "                      [--timeout SECONDS] [--only CASE[,CASE...]]",
                   "                      [--tls] [--tls-ca FILE] [--tls-server-name NAME]",
                   "                      [--tls-cert FILE --tls-key FILE]",
                   "checklist-conformance --list | --markdown"],
        details: """
        Runs every case of the bad-input catalogue (Protocol/SPEC.md section 8) and a
        happy path through every message against the server, printing PASS, FAIL or
        SKIP per case. Each case also checks that a second connection still works and
        that the namespace's data did not change. With --tls every connection speaks
        TLS, and the whole catalogue runs inside it (a half-close is close_notify and
        then the FIN; a reset sends no close_notify). Exit status: 0 when no case
        failed, 1 when one did, 2 bad usage, 3 with --tls when the first TLS handshake
        fails (e.g. the server's certificate does not verify): then no case runs.
        """,
        positionals: [Positional("HOST:PORT", optional: true)],
        options: [
            .value("--token", "T", "the token of the namespace to test (servers with access\ncontrol); also read from $CHECKLIST_TOKEN"),
            .value("--second-token", "U", "a token of another namespace: runs the isolation case"),
            .value("--idle", "SECONDS", "how long the idle cases stay silent (default 2)"),
            .value("--timeout", "SECONDS", "the longest an answer may take (default 10)"),
            .value("--only", "CASES", "run only these cases (comma-separated ids)"),
            .flag("--list", "print the case ids and inputs, run nothing"),
            .flag("--markdown", "print the catalogue as the SPEC.md table, run nothing"),
        ] + TLSClientOptions.specs,
        epilogue: TLSClientOptions.environmentHelp + """


        Run it against a server nobody else uses: it creates and deletes lists of
        its own, and any other change to the namespace fails the data checks.
        """)

    var action: Action
    /// `HOST:PORT` as given (for the report's first line).
    var address: String?
    var token: String?
    var secondToken: String?
    var idle: Duration = .seconds(2)
    var timeout: Duration = .seconds(10)
    var only: Set<String>?
    /// `--tls` and the `--tls-*` options over the `CHECKLIST_TLS*` variables.
    var tls = TLSClientOptions()
    /// The usage lines shown after a usage error found later (a bad `--only`).
    var usage = ""

    /// Parses `arguments` (without the program name); `environmentToken`
    /// is `$CHECKLIST_TOKEN`, which `--token` overrides; `environment`
    /// holds the `CHECKLIST_TLS*` variables, which the `--tls*` options override.
    init(_ arguments: [String], environmentToken: String?, environment: [String: String] = [:]) throws(UsageError) {
        let parsed = try CommandLineParser.parse(arguments, Self.command)
        usage = parsed.usage
        action = .help
        if parsed.helpRequested { return }
        if parsed.flag("--list") { action = .list; return }
        if parsed.flag("--markdown") { action = .markdown; return }
        token = parsed.string("--token") ?? environmentToken.flatMap { $0.isEmpty ? nil : $0 }
        secondToken = parsed.string("--second-token")
        idle = try parsed.duration("--idle") ?? idle
        timeout = try parsed.duration("--timeout") ?? timeout
        only = parsed.string("--only").map { Set($0.split(separator: ",").map(String.init)) }
        guard let address = parsed.positional(0) else { throw parsed.error("missing argument HOST:PORT") }
        let server = try ValueParser.hostPort("the server", address)
        do throws(UsageError) {
            tls = try TLSClientOptions(environment: environment).overridden(by: TLSClientOptions(parsed))
            _ = try tls.configuration()
        } catch {
            throw error.withUsage(parsed.usage)
        }
        self.address = address
        action = .run(host: server.host, port: server.port)
    }
}
