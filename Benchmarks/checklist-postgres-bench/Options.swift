import ChecklistCommandLine

/// `checklist-postgres-bench`'s command line.
struct Options {
    var items: UInt64 = 1_000_000
    var loads = 5
    var conninfo: String?
    var pgbenchSeconds = 10

    static let command = CommandSpec(
        name: "checklist-postgres-bench",
        details: """
        How fast a list loads from PostgreSQL into an empty Store, and the pgbench
        anchor figure of the same cluster. Without --postgres it starts a private
        cluster (fsync on) and stops it at the end.
        """,
        options: [
            .value("--items", "N", "items of the list loaded (default 1000000)"),
            .value("--loads", "N", "loads timed (default 5)"),
            .value("--postgres", "CONNINFO", "the database to use (default: a private cluster)"),
            .value("--pgbench-seconds", "S", "how long pgbench runs on the private cluster; 0 skips it (default 10)"),
        ])

    /// The options of `arguments`; exits on `--help` and on bad usage.
    init(_ arguments: [String]) {
        let parsed = CommandLineTool.parseOrExit(arguments, Self.command)
        do throws(UsageError) {
            items = try parsed.integer("--items", UInt64.self, min: 1) ?? items
            loads = try parsed.integer("--loads", Int.self, min: 1) ?? loads
            conninfo = parsed.string("--postgres")
            pgbenchSeconds = try parsed.integer("--pgbench-seconds", Int.self) ?? pgbenchSeconds
        } catch {
            CommandLineTool.fail(error, program: Self.command.name)
        }
    }
}
