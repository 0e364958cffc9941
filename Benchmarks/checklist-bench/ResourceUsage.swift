import Foundation

/// Resident memory of this process, from /proc (Linux).
enum ResourceUsage {
    /// Peak resident set size (VmHWM) in bytes.
    static func peakResidentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kb = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) } ?? 0
            return kb * 1024
        }
        return 0
    }

    /// Resident memory (VmRSS) of process `pid` now, in bytes; nil if unknown.
    static func residentBytes(pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }.map { $0 * 1024 }
        }
        return nil
    }

    /// User plus system CPU time of process `pid` so far (all its threads),
    /// and of its main thread, in milliseconds (from /proc/PID/stat and
    /// /proc/PID/task/PID/stat, in clock ticks); nil if unknown.
    static func cpuMilliseconds(pid: Int32) -> (process: Double, mainThread: Double)? {
        func ticks(_ path: String) -> Double? {
            guard let stat = try? String(contentsOfFile: path, encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            // Fields after "(comm)": state is field 3, utime 14, stime 15.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
            return (user + system) * 1000 / Double(sysconf(Int32(_SC_CLK_TCK)))
        }
        guard let process = ticks("/proc/\(pid)/stat"), let main = ticks("/proc/\(pid)/task/\(pid)/stat") else { return nil }
        return (process, main)
    }

    /// Resets the peak to the current resident size (`echo 5 > clear_refs`),
    /// so a scenario's figure does not include its set-up.
    static func resetPeakResident() {
        _ = FileManager.default.createFile(atPath: "/proc/self/clear_refs", contents: Data("5".utf8))
    }
}

/// CPU time this process (the benchmark tool itself, not the server) has
/// used, so that every scenario can say what one request cost the tool: a
/// tool near one core per connection thread measures itself, not the server.
/// It also counts the tool's context switches: on a busy machine every
/// thread wake-up per request adds a wait for a core.
struct ToolCPU {
    /// The tool's usage so far (getrusage RUSAGE_SELF, every thread): user
    /// plus system CPU time in nanoseconds, and context switches (voluntary
    /// plus involuntary).
    static func sample() -> (nanos: UInt64, switches: UInt64) {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return (0, 0) }
        func ns(_ t: timeval) -> UInt64 { UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_usec) * 1000 }
        return (ns(usage.ru_utime) + ns(usage.ru_stime), UInt64(usage.ru_nvcsw + usage.ru_nivcsw))
    }

    private let start: (nanos: UInt64, switches: UInt64)
    private var end: (nanos: UInt64, switches: UInt64)?

    /// Starts counting now (at the beginning of the measured part).
    init() { start = Self.sample() }

    /// Stops counting now (at the end of the measured part).
    mutating func stop() { end = Self.sample() }

    /// Microseconds of tool CPU per request over the measured part (until
    /// `stop()`, or now), or 0 without requests.
    func microsPerRequest(_ requests: Int) -> Double {
        guard requests > 0 else { return 0 }
        return Double((end ?? Self.sample()).nanos - start.nanos) / 1000 / Double(requests)
    }

    /// The tool's context switches per request over the measured part, or 0
    /// without requests.
    func switchesPerRequest(_ requests: Int) -> Double {
        guard requests > 0 else { return 0 }
        return Double((end ?? Self.sample()).switches - start.switches) / Double(requests)
    }
}

extension BenchReport {
    /// Adds `toolCpuUsPerRequest` and `toolSwitchesPerRequest`: the tool's
    /// own CPU time and context switches per request.
    mutating func addToolCPU(_ cpu: ToolCPU, requests: Int) {
        add("toolCpuUsPerRequest", cpu.microsPerRequest(requests))
        add("toolSwitchesPerRequest", cpu.switchesPerRequest(requests))
    }
}
