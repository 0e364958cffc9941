import ChecklistCommandLine
import ChecklistTesting
import Foundation

/// `checklist-bench pgbench`: single-item patches through one `checklistd
/// --postgres` against PostgreSQL's own `pgbench -N`, on the same private
/// cluster (initdb in a temporary directory, fsync and synchronous commit
/// on), alternated round by round so that both see the same machine: each
/// round runs `pgbench -N -c C -j 2 -T S`, then `checklist-bench load --mix
/// MIX --connections C --seconds S --postgres` on its own database. A
/// patch is one transaction of ours, a `-N` transaction one of pgbench's;
/// the ratio is patches a second over pgbench's transactions a second.
enum PgbenchScenario {
    /// The scenario's options, for the parser and `--help`.
    static let spec = CommandSpec(
        name: "pgbench", summary: "single-item patches on PostgreSQL against pgbench -N, same private cluster, alternated",
        details: "Needs PostgreSQL's server and client programs (initdb, pg_ctl, pgbench); starts and removes its own cluster.",
        options: [
            .value("--connections", "N", "connections of both pgbench and the load (default 50)"),
            .value("--seconds", "S", "how long each run lasts (default 10)"),
            .value("--rounds", "N", "pgbench runs and load runs, alternated (default 2)"),
            .value("--mix", "KIND=WEIGHT,...", "the load's requests (default patch=100: a check or an edit of one item)"),
            BenchOptions.json,
        ])

    static func run(_ args: BenchArguments) async throws {
        let connections = try args.int("connections", default: 50, min: 1)
        let seconds = try args.int("seconds", default: 10, min: 1)
        let rounds = try args.int("rounds", default: 2, min: 1)
        let mix = args.string("mix") ?? "patch=100"

        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let anchor = "pgbench_anchor"
        try cluster.pgbenchInitialise(database: anchor)
        let conninfo = try cluster.createDatabase("checklist_bench")
        let load = try BenchArguments(["--postgres", conninfo, "--mix", mix, "--connections", String(connections),
                                       "--seconds", String(seconds)], LoadScenario.spec)

        var report = BenchReport()
        report.add("scenario", "pgbench")
        report.add("connections", connections)
        report.add("seconds", seconds)
        report.add("mix", mix)
        var ratios: [Double] = []
        var errors = 0
        for round in 1...rounds {
            let tps = try cluster.pgbenchTPS(database: anchor, clients: connections, seconds: seconds)
            let (figures, examples) = try await LoadScenario.measure(load)
            let perSecond = figures.number("requestsPerSecond") ?? 0
            errors += Int(figures.number("errors") ?? 0)
            ratios.append(perSecond / tps)
            report.add("pgbenchTps\(round)", tps)
            report.add("patchesPerSecond\(round)", perSecond)
            report.add("p99Ms\(round)", figures.number("p99Ms") ?? .nan)
            report.add("ratio\(round)", perSecond / tps)
            for example in examples { FileHandle.standardError.write(Data("  e.g. \(example)\n".utf8)) }
        }
        let sorted = ratios.sorted()
        report.add("ratioMedian", (sorted[(sorted.count - 1) / 2] + sorted[sorted.count / 2]) / 2)
        report.add("errors", errors)
        report.print(json: args.flag("json"))
    }
}
