/// `pgbench`, PostgreSQL's own benchmark, as the anchor figure of a cluster:
/// what this machine's PostgreSQL commits a second, measured beside our
/// own figures on the same cluster.
extension PostgresCluster {
    /// Creates `database` and fills it with pgbench's tables (`pgbench -i`
    /// at `scale`; 10 is 1M accounts).
    public func pgbenchInitialise(database: String, scale: Int = 10) throws {
        _ = try createDatabase(database)
        let result = try runClient("pgbench", ["-i", "-q", "-s", String(scale), database], timeout: .seconds(300))
        try Self.check(result, "pgbench -i")
    }

    /// Runs `pgbench -N` (the simple-update script without the branch and
    /// teller updates: one UPDATE, one SELECT, one INSERT a transaction)
    /// with `clients` connections on 2 threads for `seconds`, and returns its
    /// transactions a second (without the connection time).
    public func pgbenchTPS(database: String, clients: Int, seconds: Int) throws -> Double {
        let result = try runClient("pgbench", ["-N", "-c", String(clients), "-j", "2", "-T", String(seconds), database],
                                   timeout: .seconds(seconds + 120))
        try Self.check(result, "pgbench -N")
        // "tps = 1783.123456 (without initial connection time)"
        for line in result.stdout.split(separator: "\n") where line.hasPrefix("tps = ") {
            if let number = line.dropFirst("tps = ".count).split(separator: " ").first, let tps = Double(number) {
                return tps
            }
        }
        throw ChildProcessError("pgbench -N printed no tps line: \(result.stdout) \(result.stderr)")
    }
}
