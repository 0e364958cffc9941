import ChecklistClient
import ChecklistLatency
import ChecklistModel
import Foundation
import Synchronization

/// What one client of `checklist-bench failover` saw.
struct FailoverClient: Sendable {
    let list: ListSummary
    /// Its own node first.
    let servers: [ServerAddress]
    let onKilledNode: Bool

    /// Patches (each a new item, its text unique), reads a page every 4th
    /// patch, follows its list, until `end`.
    func run(until end: ContinuousClock.Instant, killAt: KillMoment) async -> ClientOutcome {
        let failovers = Atomic<Int>(0)
        let sync = ChecklistSync(servers: servers, clientName: "failover-client", timeout: .seconds(2),
                                 retry: .init(initialBackoff: .milliseconds(20), maxBackoff: .milliseconds(500), patchAttempts: 20),
                                 onReconnect: { if $0.isFailover { failovers.add(1, ordering: .relaxed) } })
        let trail = RevisionTrail(from: list.revision)
        let events = sync.subscribe([list.id], from: [list.id: list.revision])
        let follower = Task {
            for await event in events {
                switch event {
                case .change(let change): trail.add(change.revision)
                case .resyncRequired(_, let revision): trail.breaks("resync required at \(revision)")
                default: continue
                }
            }
        }
        var outcome = ClientOutcome(onKilledNode: onKilledNode)
        var reader: ChecklistConnection?
        var n = 0
        while ContinuousClock.now < end {
            let text = "\(list.id)-\(n)"
            n += 1
            let sent = ContinuousClock.now
            do {
                _ = try await sync.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: text))])
                let done = ContinuousClock.now
                outcome.acked.append(text)
                outcome.rtt.record(nanos: Self.nanos(sent.duration(to: done)))
                // Working again: answered after the kill, by the surviving node.
                if outcome.gapNanos == nil, let kill = killAt.instant, done > kill,
                   !onKilledNode || sync.patchServer != servers[0] {
                    outcome.gapNanos = Self.nanos(kill.duration(to: done))
                }
            } catch {
                outcome.failures += 1
                if outcome.examples.count < 2 { outcome.examples.append("patch of list \(list.id) failed: \(error)") }
            }
            if n % 4 == 0 {
                do {
                    if reader == nil || reader!.isClosed {
                        reader = try await ChecklistConnection.connect(servers: servers, clientName: "failover-reader", timeout: .seconds(2))
                    }
                    _ = try await reader!.page(list.id, limit: 50)
                    outcome.reads += 1
                } catch {
                    await reader?.close()
                    reader = nil
                }
            }
        }
        await reader?.close()
        // The subscription must reach the last revision this client made.
        let target = list.revision + UInt64(outcome.acked.count)
        outcome.subscriptionWhole = await trail.wait(for: target, timeout: .seconds(10))
        if !outcome.subscriptionWhole { outcome.examples.append("subscription of list \(list.id): \(trail.summary), wanted \(target)") }
        follower.cancel()
        await sync.close()
        outcome.failovers = failovers.load(ordering: .relaxed)
        return outcome
    }

    private static func nanos(_ d: Duration) -> UInt64 {
        UInt64(max(0, d.components.seconds)) * 1_000_000_000 + UInt64(max(0, d.components.attoseconds) / 1_000_000_000)
    }
}

/// When the node was killed, once it was.
final class KillMoment: Sendable {
    private let moment = Mutex<ContinuousClock.Instant?>(nil)

    var instant: ContinuousClock.Instant? { moment.withLock { $0 } }

    func mark() { moment.withLock { $0 = .now } }
}

/// What one client counted.
struct ClientOutcome: Sendable {
    let onKilledNode: Bool
    var acked: [String] = []
    var failures = 0
    var reads = 0
    var rtt = LatencyHistogram()
    /// From the kill to the first patch acknowledged after it.
    var gapNanos: UInt64?
    var failovers = 0
    /// What went wrong, for standard error (a few).
    var examples: [String] = []
    /// Revisions came one by one up to the last one made.
    var subscriptionWhole = false

    init(onKilledNode: Bool) { self.onKilledNode = onKilledNode }
}

/// A subscription's revisions, checked as they come: each must be the next.
final class RevisionTrail: Sendable {
    private let state: Mutex<(last: Revision, broken: Bool, firstBreak: String?)>

    init(from revision: Revision) { state = Mutex((revision, false, nil)) }

    func add(_ revision: Revision) {
        state.withLock { s in
            if revision != s.last + 1 {
                s.broken = true
                if s.firstBreak == nil { s.firstBreak = "\(revision) after \(s.last)" }
            }
            s.last = max(s.last, revision)
        }
    }

    /// Marks the trail broken: the subscription could not replay its changes.
    func breaks(_ why: String) {
        state.withLock { s in
            s.broken = true
            if s.firstBreak == nil { s.firstBreak = why }
        }
    }

    /// Where it is, and its first skip or repeat.
    var summary: String {
        state.withLock { s in "at \(s.last)" + (s.firstBreak.map { ", first break \($0)" } ?? "") }
    }

    /// Waits until the trail reached `target`: true if it did without a
    /// skip or a repeat, false when broken or after `timeout`.
    func wait(for target: Revision, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (last, broken) = state.withLock { ($0.last, $0.broken) }
            if broken { return false }
            if last >= target { return true }
            guard ContinuousClock.now < deadline, (try? await Task.sleep(for: .milliseconds(10))) != nil else { return false }
        }
    }
}
