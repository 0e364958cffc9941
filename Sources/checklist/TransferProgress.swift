import ChecklistClient
#if canImport(Glibc)
import ChecklistSnapshot
import Glibc
#endif

/// Shows how an export or import is going: a bar redrawn in place when
/// standard output is a terminal, otherwise a plain line at most every two
/// seconds (on standard error when standard output carries the data or the
/// --json document).
final class TransferProgress {
    private let verb: String
    private let terminal: Bool
    private let descriptor: Int32
    private let started = ContinuousClock.now
    private var lastShown: ContinuousClock.Instant?
    private var drawn = false

    /// - Parameters:
    ///   - verb: "exported" or "imported".
    ///   - stdoutTaken: standard output carries the data itself (FILE `-`)
    ///     or a JSON document: plain lines then go to standard error.
    init(verb: String, stdoutTaken: Bool) {
        self.verb = verb
        terminal = isatty(stdoutTaken ? 2 : 1) == 1
        descriptor = stdoutTaken ? 2 : 1
        // Plain lines only for transfers that take a while.
        if !terminal { lastShown = started }
    }

    var elapsedSeconds: Double {
        let (s, atto) = started.duration(to: .now).components
        return Double(s) + Double(atto) / 1e18
    }

    /// Reports `progress`; `fraction` (0...1) is how much is done, if known.
    func update(_ progress: SnapshotTransferProgress, fraction: Double?) {
        let now = ContinuousClock.now
        if let lastShown, lastShown.duration(to: now) < (terminal ? .milliseconds(100) : .seconds(2)) { return }
        lastShown = now
        let seconds = max(elapsedSeconds, 0.001)
        let rate = Self.bytes(UInt64(Double(progress.bytes) / seconds)) + "/s"
        let items = progress.totalItems.map { "\(Self.count(progress.items))/\(Self.count($0)) items" } ?? "\(Self.count(progress.items)) items"
        if terminal {
            let width = 24
            let done = fraction.map { min(1, max(0, $0)) }
            let filled = done.map { Int($0 * Double(width)) } ?? 0
            let bar = done == nil ? "" : "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
                + String(Int((done ?? 0) * 100)) + "%  "
            put("\r\u{1B}[K" + bar + Self.bytes(progress.bytes) + "  " + items + "  " + rate)
            drawn = true
        } else {
            put("\(verb) \(Self.bytes(progress.bytes)), \(items), \(rate)\n")
        }
    }

    /// Clears the bar before the final output.
    func finish() {
        if drawn { put("\r\u{1B}[K") }
        drawn = false
    }

    private func put(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if n <= 0 { if n < 0 && errno == EINTR { continue } else { return } }
                offset += n
            }
        }
    }

    /// `12.3 MB`: decimal units, as transfer rates usually are.
    static func bytes(_ n: UInt64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var value = Double(n)
        var unit = 0
        while value >= 1000 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        if unit == 0 { return "\(n) B" }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }

    /// `1,234,567`.
    static func count(_ n: UInt64) -> String {
        let digits = Array(String(n))
        var out = ""
        for (i, d) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(d)
        }
        return out
    }
}
