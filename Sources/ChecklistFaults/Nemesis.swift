import ChecklistRandom
import ChecklistThreads
#if canImport(Glibc)
import Glibc
#endif

/// The seeded nemesis: every `interval` (random within bounds) one fault of
/// the kinds asked for, on a random node, held for a random time, then
/// healed. Each fault is recorded with its start and heal. One thread; the
/// count of faults and every wait are bounded, and `healAll()` leaves the
/// cluster whole (every node running and resumed, every link passing).
struct Nemesis {
    let cluster: FaultCluster
    let kinds: [FaultKind]
    let recorder: Recorder
    var random: SplitMix64
    /// Wait between faults, in milliseconds.
    let interval: ClosedRange<UInt64>
    /// How long a fault is held, in milliseconds.
    let hold: ClosedRange<UInt64>

    init(cluster: FaultCluster, kinds: Set<FaultKind>, recorder: Recorder, seed: UInt64,
         interval: ClosedRange<UInt64> = 1000...4000, hold: ClosedRange<UInt64> = 500...4000) {
        self.cluster = cluster
        self.kinds = kinds.sorted()
        self.recorder = recorder
        random = Seeds.generator(seed, stream: Seeds.nemesis)
        self.interval = interval
        self.hold = hold
    }

    /// Causes faults until `deadline`, then heals everything.
    mutating func run(until deadline: ContinuousClock.Instant) {
        defer { healAll() }
        guard !kinds.isEmpty else { return }
        var count = 0
        while count < 10_000 {
            Self.wait(until: min(deadline, .now + .milliseconds(Int(pick(interval)))))
            guard ContinuousClock.now < deadline else { return }
            count += 1
            let kind = kinds[Int(random.next() % UInt64(kinds.count))]
            let node = Int(random.next() % UInt64(cluster.count))
            let held = Duration.milliseconds(Int(pick(hold)))
            cause(kind, node: node, held: min(held, max(.milliseconds(100), ContinuousClock.now.duration(to: deadline)) + .seconds(1)))
        }
    }

    private mutating func pick(_ range: ClosedRange<UInt64>) -> UInt64 {
        range.lowerBound + random.next() % (range.upperBound - range.lowerBound + 1)
    }

    /// Causes one fault, holds it, heals it, and records it.
    private func cause(_ kind: FaultKind, node: Int, held: Duration) {
        let record = recorder.faultStarted(kind, node: kind == .pgrestart ? nil : node)
        var note: String?
        switch kind {
        case .kill:
            cluster.process(node)?.kill()
            Self.wait(until: .now + held)
            note = restart(node)
        case .pause:
            cluster.signal(node, SIGSTOP)
            Self.wait(until: .now + held)
            cluster.signal(node, SIGCONT)
        case .term:
            // The drain is bounded: SIGKILL after 15 s.
            cluster.process(node)?.stop(signal: SIGTERM, timeout: .seconds(15))
            Self.wait(until: .now + held / 4)
            note = restart(node)
        case .reset:
            cluster.relays[node].resetConnections()
            Self.wait(until: .now + held)
            cluster.relays[node].heal()
        case .stall:
            // Longer than the nodes' statement timeout, so that the bound on
            // a stuck statement is what ends each wait.
            cluster.relays[node].stall()
            Self.wait(until: .now + .seconds(cluster.statementTimeoutSeconds) + held * 2)
            cluster.relays[node].heal()
        case .pgrestart:
            do { try cluster.postgres.restart(mode: .immediate) } catch { note = "pg_ctl restart failed: \(error)" }
        }
        recorder.faultHealed(record, note: note)
    }

    /// Restarts a node; a note when it would not start (tried three times).
    private func restart(_ node: Int) -> String? {
        var failures: [String] = []
        for _ in 0..<3 {
            do {
                try cluster.start(node)
                return nil
            } catch {
                failures.append(String("\(error)".suffix(300)))
            }
        }
        return "node \(node) did not restart (its relay to PostgreSQL: \(cluster.relays[node].connectionsOpen) connections open, link \(cluster.relays[node].mode)): \(failures.joined(separator: " | "))"
    }

    /// Leaves the cluster whole: links passing, nodes resumed, dead nodes started.
    func healAll() {
        for relay in cluster.relays { relay.heal() }
        for node in 0..<cluster.count {
            cluster.signal(node, SIGCONT)
            if !cluster.isRunning(node) {
                let record = recorder.faultStarted(.kill, node: node)
                recorder.faultHealed(record, note: restart(node).map { "heal: \($0)" } ?? "heal: restarted a node found down")
            }
        }
    }

    /// Waits until `deadline`: the fault's hold or the gap between faults,
    /// which are the schedule itself, not a wait for readiness.
    static func wait(until deadline: ContinuousClock.Instant) {
        let gate = ConditionLock(false)
        gate.withLock(waitingOn: .progress, until: { $0 }, deadline: deadline) { _, _ in }
    }
}
