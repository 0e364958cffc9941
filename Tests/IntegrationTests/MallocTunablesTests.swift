import ChecklistTesting
import Foundation
import Testing

/// `checklistd` starts again with glibc's thread cache enlarged
/// (Sources/checklistd/MallocTunables.swift) unless its environment sets
/// it: read from the environment the running process was started with.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct MallocTunablesTests {
    /// The settings of `GLIBC_TUNABLES` in a process's starting
    /// environment (`/proc/PID/environ`). The dynamic loader cuts the
    /// value in place where it reads it (each ':' becomes a NUL), so the
    /// settings after the first follow as entries of their own.
    static func tunables(of pid: pid_t) throws -> [String] {
        let raw = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
        let entries = raw.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        let prefix = "GLIBC_TUNABLES="
        guard let first = entries.firstIndex(where: { $0.hasPrefix(prefix) }) else { return [] }
        var settings = entries[first].dropFirst(prefix.count).split(separator: ":").map(String.init)
        for entry in entries[(first + 1)...] {
            guard entry.hasPrefix("glibc.") else { break }
            settings.append(entry)
        }
        return settings
    }

    static func start(environment: [String: String]) throws -> (ServerProcess, TemporaryDirectory) {
        let directory = try TemporaryDirectory(prefix: "checklistd-malloc")
        let process = try ServerProcess.start(
            executable: try ProductLocator.path(of: "checklistd"),
            arguments: ["--host", "127.0.0.1", "--port", "0", "--data-dir", directory.path],
            environment: environment)
        return (process, directory)
    }

    @Test func theServerRunsWithTheLargerThreadCache() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["GLIBC_TUNABLES"] = nil
        let (server, directory) = try Self.start(environment: environment)
        defer { server.stop(); _ = directory }
        #expect(try Self.tunables(of: server.pid) == ["glibc.malloc.tcache_count=1024"])
    }

    @Test func otherTunablesAreKeptBesideIt() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["GLIBC_TUNABLES"] = "glibc.malloc.arena_max=2"
        let (server, directory) = try Self.start(environment: environment)
        defer { server.stop(); _ = directory }
        #expect(try Self.tunables(of: server.pid) == ["glibc.malloc.arena_max=2", "glibc.malloc.tcache_count=1024"])
    }

    @Test func anOperatorsOwnCacheSizeIsKept() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["GLIBC_TUNABLES"] = "glibc.malloc.tcache_count=7"
        let (server, directory) = try Self.start(environment: environment)
        defer { server.stop(); _ = directory }
        #expect(try Self.tunables(of: server.pid) == ["glibc.malloc.tcache_count=7"])
    }
}
