import ChecklistCommandLine
import ChecklistClient
import ChecklistTesting
import Foundation

/// `checklist-bench memory`: what one item costs the server, filled over the
/// wire and after a restart, beside what the same list costs Redis. N items
/// (texts of `--text-bytes`) are appended to one list with pipelined PATCH
/// batches; the server's resident memory is read before and after (once
/// its log has written everything: `settleMs`), then again after a restart
/// on the same data directory. With `--redis auto`
/// (the default; skipped when `redis-server` is not on PATH) a private
/// `redis-server` (no persistence, a Unix socket) gets the same texts with
/// RPUSH, and its `used_memory` growth is the comparison.
enum MemoryScenario {
    /// The scenario's options, for the parser and `--help`.
    static let spec = CommandSpec(
        name: "memory", summary: "bytes per item, over the wire and after a restart, beside Redis",
        options: [
            .value("--items", "N", "items (default 1000000)"),
            BenchOptions.textBytes(40),
            .value("--redis", "auto|off", "also measure redis-server when on PATH (default auto)"),
            .value("--retain-bytes", "N", "the server's --retain-bytes (default: its own)"),
            BenchOptions.json,
        ])

    static func run(_ args: BenchArguments) async throws {
        let items = try args.int("items", default: 1_000_000, min: 1)
        let textBytes = try args.int("text-bytes", default: 40, min: 8)
        let redisMode = args.string("redis") ?? "auto"
        guard ["auto", "off"].contains(redisMode) else {
            throw UsageError("--redis is auto or off, not '\(redisMode)'")
        }

        // The server's retained change history (`--retain-bytes`, 64 MiB by
        // default) is part of what a fill costs; this shows its share.
        let retain = try args.string("retain-bytes").map { _ in try args.int("retain-bytes", default: 0, min: 0) }
        let target = try BenchTarget(args, extraServerArguments: retain.map { ["--retain-bytes", String($0)] } ?? [])
        defer { target.stop() }
        guard let pid = target.serverProcess?.pid else { throw UsageError("memory needs its own server") }
        let before = ResourceUsage.residentBytes(pid: pid) ?? 0
        let connection = try await target.connect()
        let started = ContinuousClock.now
        _ = try await target.benchList(items: items, textBytes: textBytes, on: connection)
        let fillSeconds = SnapshotScenario.seconds(started.duration(to: .now))
        let settleMs = SnapshotScenario.seconds(try await logAtRest(connection)) * 1000
        await connection.close()
        let filled = ResourceUsage.residentBytes(pid: pid) ?? 0
        let restartMs = SnapshotScenario.seconds(try target.restart()) * 1000
        let restarted = target.serverProcess.flatMap { ResourceUsage.residentBytes(pid: $0.pid) } ?? 0

        var report = BenchReport()
        report.add("scenario", "memory")
        report.add("items", items)
        report.add("textBytes", textBytes)
        report.add("fillSeconds", fillSeconds)
        report.add("settleMs", settleMs)
        report.add("serverRssBeforeBytes", before)
        report.add("serverRssFilledBytes", filled)
        report.add("serverRssRestartedBytes", restarted)
        let fillPerItem = Double(filled - before) / Double(items)
        let restartPerItem = Double(restarted - before) / Double(items)
        report.add("fillBytesPerItem", fillPerItem)
        report.add("restartBytesPerItem", restartPerItem)
        report.add("restartMs", restartMs)
        if redisMode == "auto", let redis = try RedisList.measure(items: items, textBytes: textBytes) {
            report.add("redisBytesPerItem", redis)
            report.add("fillRatioToRedis", fillPerItem / redis)
            report.add("restartRatioToRedis", restartPerItem / redis)
        }
        report.print(json: args.flag("json"))
    }

    /// Waits until the server's log holds on disk every record it appended
    /// (STATS: durable LSN at the last LSN; at most about a second under
    /// `--fsync everysec`), so that the resident memory read next is what
    /// the items hold, not the log's batches still being written. Returns
    /// how long that took; throws after 10 s.
    static func logAtRest(_ connection: ChecklistConnection) async throws -> Duration {
        let started = ContinuousClock.now
        while true {
            guard let log = try await connection.stats().log else { return started.duration(to: .now) }
            if log.durableLSN >= log.lastLSN { return started.duration(to: .now) }
            guard started.duration(to: .now) < .seconds(10) else {
                throw BenchFailure(description: "the server's log did not come to rest within 10 s")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// The same list in a private `redis-server`: `used_memory` per item.
enum RedisList {
    /// nil when `redis-server` or `redis-cli` is not on PATH.
    static func measure(items: Int, textBytes: Int) throws -> Double? {
        guard let server = which("redis-server"), let cli = which("redis-cli") else { return nil }
        let directory = try TemporaryDirectory(prefix: "checklist-bench-redis")
        defer { directory.remove() }
        let socket = directory.appending("redis.sock")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: server)
        process.arguments = ["--port", "0", "--unixsocket", socket, "--save", "", "--appendonly", "no", "--dir", directory.path]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer {
            // Not SIGTERM: the child inherits this process's blocked signals.
            _ = try? runCLI(cli, socket, ["SHUTDOWN", "NOSAVE"])
            process.waitUntilExit()
        }
        // Ready once it answers PING (no fixed sleep: bounded polling of the socket).
        let deadline = ContinuousClock.now + .seconds(10)
        while (try? runCLI(cli, socket, ["PING"])) != "PONG\n" {
            guard ContinuousClock.now < deadline else { throw BenchFailure(description: "redis-server did not start") }
            usleep(20_000)
        }
        let before = try usedMemory(cli, socket)
        // RESP commands: RPUSH of 1,000 texts each, the same texts as BenchTarget.benchList.
        var commands = [UInt8]()
        let padding = String(repeating: "x", count: max(0, textBytes - 8))
        var next = 0
        while next < items {
            let count = min(1000, items - next)
            commands += Array("*\(count + 2)\r\n$5\r\nRPUSH\r\n$10\r\nbench-list\r\n".utf8)
            for i in next..<(next + count) {
                let text = String(format: "%08d", i % 100_000_000) + padding
                commands += Array("$\(text.utf8.count)\r\n\(text)\r\n".utf8)
            }
            next += count
        }
        let pipe = Process()
        pipe.executableURL = URL(fileURLWithPath: cli)
        pipe.arguments = ["-s", socket, "--pipe"]
        let input = Pipe()
        pipe.standardInput = input
        pipe.standardOutput = FileHandle.nullDevice
        try pipe.run()
        input.fileHandleForWriting.write(Data(commands))
        try input.fileHandleForWriting.close()
        pipe.waitUntilExit()
        guard try runCLI(cli, socket, ["LLEN", "bench-list"]) == "\(items)\n" else {
            throw BenchFailure(description: "redis list has the wrong length")
        }
        return Double(try usedMemory(cli, socket) - before) / Double(items)
    }

    static func usedMemory(_ cli: String, _ socket: String) throws -> Int {
        let info = try runCLI(cli, socket, ["INFO", "memory"])
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix("used_memory:") {
            if let value = Int(line.dropFirst("used_memory:".count)) { return value }
        }
        throw BenchFailure(description: "no used_memory in redis INFO")
    }

    static func runCLI(_ cli: String, _ socket: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: cli)
        process.arguments = ["-s", socket] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
