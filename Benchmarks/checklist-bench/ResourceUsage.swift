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

    /// Resets the peak to the current resident size (`echo 5 > clear_refs`),
    /// so a scenario's figure does not include its set-up.
    static func resetPeakResident() {
        _ = FileManager.default.createFile(atPath: "/proc/self/clear_refs", contents: Data("5".utf8))
    }
}
