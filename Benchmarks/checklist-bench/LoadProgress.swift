#if canImport(Glibc)
import Glibc
#endif

/// The live one-line progress display of `load`, on standard error, only
/// when that is a terminal (so logs and `--json` output stay clean); else
/// a single line when the run begins.
struct LoadProgress {
    private let enabled = isatty(2) != 0
    private var lastAnswered: UInt64 = 0
    private var lastNanos: UInt64 = 0

    /// Rewrites the line: elapsed time, connections, requests and the rate
    /// since the previous update, failures.
    mutating func update(_ shared: LoadShared, phase: String, elapsedNanos: UInt64, target: Int) {
        guard enabled else { return }
        let answered = shared.answered.load(ordering: .relaxed)
        let now = monotonicNanos()
        let rate = lastNanos == 0 || now <= lastNanos ? 0 : Double(answered - lastAnswered) / (Double(now - lastNanos) / 1e9)
        lastAnswered = answered
        lastNanos = now
        let open = shared.open.load(ordering: .relaxed)
        let line = "\(phase) \(String(format: "%6.1f", Double(elapsedNanos) / 1e9))s  conns \(open)/\(target)"
            + "  requests \(answered)  \(Int(rate)) req/s  errors \(shared.failures.load(ordering: .relaxed))"
        write("\r\u{1B}[K" + line)
    }

    /// Says that the run began (connections made), once: when standard
    /// error is not a terminal, as a plain line a supervising script or test
    /// can wait for, `checklist-bench: running, OPEN/TARGET connections`.
    func started(_ shared: LoadShared, target: Int) {
        guard !enabled else { return }
        write("checklist-bench: running, \(shared.open.load(ordering: .relaxed))/\(target) connections\n")
    }

    /// Clears the line.
    func finish() {
        guard enabled else { return }
        write("\r\u{1B}[K")
    }

    private func write(_ text: String) {
        var text = text
        text.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
