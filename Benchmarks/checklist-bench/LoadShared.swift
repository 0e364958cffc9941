import ChecklistLatency
import Synchronization

/// What the load threads and the scenario's main task share: the phase
/// (set by the main task), live counters for the progress line (added to in
/// batches by the workers), and each worker's result when it finishes.
final class LoadShared: Sendable {
    enum Phase: Int {
        /// Connecting and handshaking; no requests yet.
        case connecting
        /// Sending requests; the measured window.
        case running
        /// No new requests; waiting for the answers still owed.
        case draining
        /// Close everything now.
        case stopping
    }

    private let phaseValue = Atomic<Int>(Phase.connecting.rawValue)
    /// `runStart`, in `monotonicNanos()`, published before `running`.
    let runStartNanos = Atomic<UInt64>(0)
    /// Connections that finished the handshake / failed to.
    let connected = Atomic<Int>(0)
    let connectFailures = Atomic<Int>(0)
    /// Workers done with their connection phase (every connection ready or failed).
    let workersConnected = Atomic<Int>(0)
    /// Answers checked, and failures of any kind, so far.
    let answered = Atomic<UInt64>(0)
    let failures = Atomic<UInt64>(0)
    /// Connections open now.
    let open = Atomic<Int>(0)
    let workersFinished = Atomic<Int>(0)
    private let results = Mutex<[LoadWorkerResult]>([])

    var phase: Phase { Phase(rawValue: phaseValue.load(ordering: .acquiring))! }

    func set(_ phase: Phase) { phaseValue.store(phase.rawValue, ordering: .releasing) }

    func finish(_ result: LoadWorkerResult) {
        results.withLock { $0.append(result) }
        workersFinished.wrappingAdd(1, ordering: .releasing)
    }

    var finishedResults: [LoadWorkerResult] { results.withLock { $0 } }
}

/// One worker's tally.
struct LoadWorkerResult: Sendable {
    var latency = LatencyHistogram()
    /// Answers received while the run window was open (for requests/s).
    var answeredInWindow: UInt64 = 0
    /// Every answer received and checked.
    var answered: UInt64 = 0
    var answeredByKind = [UInt64](repeating: 0, count: LoadRequestKind.allCases.count)
    /// Failures by name: server ERROR codes (`NOT_FOUND`, ...) and the
    /// client's own checks (`check:page`, `closed`, `timeout`, ...).
    var errors: [String: UInt64] = [:]
    /// The first few failure descriptions, for the report.
    var examples: [String] = []
    var bytesIn: UInt64 = 0
    var bytesOut: UInt64 = 0

    mutating func fail(_ name: String, _ detail: @autoclosure () -> String) {
        errors[name, default: 0] += 1
        if examples.count < 5 { examples.append("\(name): \(detail())") }
    }

    mutating func merge(_ other: LoadWorkerResult) {
        latency.merge(other.latency)
        answeredInWindow += other.answeredInWindow
        answered += other.answered
        for i in answeredByKind.indices { answeredByKind[i] += other.answeredByKind[i] }
        errors.merge(other.errors, uniquingKeysWith: +)
        for example in other.examples where examples.count < 5 { examples.append(example) }
        bytesIn += other.bytesIn
        bytesOut += other.bytesOut
    }

    var errorCount: UInt64 { errors.values.reduce(0, +) }
}
