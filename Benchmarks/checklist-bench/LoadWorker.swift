#if canImport(Glibc)
import Glibc
#endif
import ChecklistIO
import ChecklistSocket
import Foundation

/// One load thread: its share of the connections, multiplexed on
/// ChecklistIO's readiness layer (epoll, or `poll(2)` with
/// `CHECKLIST_READINESS=poll`), each socket non-blocking. It connects them (a bounded number at a time),
/// then, while the shared phase is `running`, keeps every connection's
/// pipeline full (closed loop) or issues requests at their due times (open
/// loop), checks every answer, and finally tallies into a
/// `LoadWorkerResult`. Everything here runs on the worker's own thread; it
/// talks to the rest only through `LoadShared`.
final class LoadWorker {
    let plan: LoadPlan
    let shared: LoadShared
    /// The worker's readiness set (used on its thread only).
    let readiness: any Readiness
    var result = LoadWorkerResult()
    private(set) var phase = LoadShared.Phase.connecting

    private let index: Int
    private var connections: [LoadConnection]
    private var nextToConnect = 0
    private var connecting = 0
    private var resolved = 0
    private var dirty: [LoadConnection] = []
    private var isDirty: [Bool]
    private var windowOpen = false
    private var drainDeadline: UInt64 = 0
    /// Open loop: nanoseconds between this worker's due requests, the next
    /// due time and the connection it goes to (round robin).
    private var dueInterval: Double = 0
    private var dueCount: UInt64 = 0
    private var runStart: UInt64 = 0
    private var dueTarget = 0
    private var published = (answered: UInt64(0), failures: UInt64(0))

    static let maxConcurrentConnects = 64
    /// How long answers still owed are waited for after the run.
    static let drainTime: UInt64 = 10_000_000_000

    /// Starts worker `index` on a thread of its own.
    static func start(index: Int, plan: LoadPlan, shared: LoadShared) {
        let thread = Thread {
            let worker = LoadWorker(index: index, plan: plan, shared: shared)
            worker.run()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    private init(index: Int, plan: LoadPlan, shared: LoadShared) {
        self.index = index
        self.plan = plan
        self.shared = shared
        // A bench that cannot wait cannot run: fail loudly at the start.
        do {
            readiness = try ReadinessKind.configured.make(capacity: 512)
        } catch {
            fatalError("checklist-bench: cannot set up the readiness layer: \(error)")
        }
        connections = plan.slots(ofWorker: index).map { LoadConnection(slot: $0, lists: plan.lists.count, seed: plan.seed) }
        isDirty = [Bool](repeating: false, count: connections.count)
    }

    deinit {
        readiness.close()
    }

    // MARK: The loop

    private func run() {
        var reportedConnected = false
        while true {
            let wanted = shared.phase
            if wanted != phase { enter(wanted) }
            if phase == .stopping { break }
            startConnects()
            if !reportedConnected && resolved == connections.count {
                reportedConnected = true
                shared.workersConnected.wrappingAdd(1, ordering: .releasing)
            }
            if phase == .draining {
                if !connections.contains(where: { $0.state == .ready && $0.outstandingCount > 0 }) { break }
                if monotonicNanos() >= drainDeadline {
                    for connection in connections where connection.state == .ready { connection.abandon(worker: self) }
                    break
                }
            }
            wait(timeoutNanos: nextTimeout())
            if phase == .running && plan.rate != nil { issueDueRequests() }
            flushDirty()
            publish()
        }
        for connection in connections { connection.close(worker: self) }
        publish()
        shared.finish(result)
    }

    private func enter(_ next: LoadShared.Phase) {
        phase = next
        switch next {
        case .connecting, .stopping:
            break
        case .running:
            windowOpen = true
            runStart = shared.runStartNanos.load(ordering: .acquiring)
            if let rate = plan.rate {
                // This worker's share of the rate, spread over its connections.
                dueInterval = 1e9 / (rate * Double(connections.count) / Double(plan.connections))
            } else {
                for connection in connections where connection.state == .ready { fillPipeline(connection) }
            }
        case .draining:
            windowOpen = false
            drainDeadline = monotonicNanos() + Self.drainTime
        }
    }

    /// Nanoseconds to wait for events: until the next due request in an open
    /// loop, otherwise a short time so phase changes are seen promptly.
    private func nextTimeout() -> UInt64 {
        if phase == .running, plan.rate != nil {
            let due = runStart + UInt64(Double(dueCount) * dueInterval)
            let now = monotonicNanos()
            return due > now ? min(due - now, 20_000_000) : 0
        }
        return 10_000_000
    }

    /// Waits up to `timeoutNanos` and hands each ready socket to its connection.
    private func wait(timeoutNanos: UInt64) {
        do {
            try readiness.wait(timeout: .nanoseconds(Int64(timeoutNanos))) { event in
                connections[(Int(event.token) - index) / plan.threads].handle(events: event.events, worker: self)
            }
        } catch {
            fatalError("checklist-bench: the readiness wait failed: \(error)")
        }
    }

    // MARK: Connecting

    private func startConnects() {
        while connecting < Self.maxConcurrentConnects && nextToConnect < connections.count {
            let connection = connections[nextToConnect]
            nextToConnect += 1
            connecting += 1
            if !connection.connect(plan: plan, readiness: readiness) {
                connectFailed(connection, "connect: \(String(cString: strerror(errno)))")
                connection.close(worker: self)
            }
        }
    }

    func connectionReady(_ connection: LoadConnection) {
        connecting -= 1
        resolved += 1
        shared.connected.wrappingAdd(1, ordering: .relaxed)
        shared.open.wrappingAdd(1, ordering: .relaxed)
        if phase == .running && plan.rate == nil { fillPipeline(connection) }
    }

    func connectFailed(_ connection: LoadConnection, _ reason: String) {
        connecting -= 1
        resolved += 1
        shared.connectFailures.wrappingAdd(1, ordering: .relaxed)
        result.fail("connect", reason)
    }

    func connectionClosed(_ connection: LoadConnection, wasOpen: Bool) {
        if wasOpen { shared.open.wrappingSubtract(1, ordering: .relaxed) }
    }

    // MARK: Requests and answers

    private func fillPipeline(_ connection: LoadConnection) {
        let now = monotonicNanos()
        while connection.outstandingCount < plan.pipeline { connection.issue(startNanos: now, plan: plan) }
        markDirty(connection)
    }

    /// Open loop: every request whose time has come goes to the next
    /// connection in turn (bounded per call, so answers keep being read).
    private func issueDueRequests() {
        let now = monotonicNanos()
        var issued = 0
        while issued < 4096 {
            let due = runStart + UInt64(Double(dueCount) * dueInterval)
            guard due <= now else { return }
            dueCount += 1
            issued += 1
            let connection = connections[dueTarget]
            dueTarget = (dueTarget + 1) % connections.count
            guard connection.state == .ready else { continue }
            connection.due(at: due, plan: plan)
            markDirty(connection)
        }
    }

    /// An answer arrived (and was checked): its latency.
    func recordAnswer(kind: LoadRequestKind, startNanos: UInt64) {
        let now = monotonicNanos()
        result.latency.record(nanos: now > startNanos ? now - startNanos : 0)
        result.answered += 1
        result.answeredByKind[kind.rawValue] += 1
        if windowOpen { result.answeredInWindow += 1 }
    }

    /// After an answer: the next request, while the run lasts.
    func answered(_ connection: LoadConnection) {
        guard phase == .running, connection.state == .ready else { return }
        if plan.rate == nil {
            connection.issue(startNanos: monotonicNanos(), plan: plan)
        } else {
            connection.issueFromBacklog(plan: plan)
        }
        markDirty(connection)
    }

    private func markDirty(_ connection: LoadConnection) {
        let local = (connection.slot - index) / plan.threads
        guard !isDirty[local] else { return }
        isDirty[local] = true
        dirty.append(connection)
    }

    private func flushDirty() {
        for connection in dirty {
            isDirty[(connection.slot - index) / plan.threads] = false
            connection.flush(worker: self)
        }
        dirty.removeAll(keepingCapacity: true)
    }

    /// Adds this worker's new answers and failures to the live counters.
    private func publish() {
        let failures = result.errorCount
        if result.answered != published.answered {
            shared.answered.wrappingAdd(result.answered - published.answered, ordering: .relaxed)
        }
        if failures != published.failures {
            shared.failures.wrappingAdd(failures - published.failures, ordering: .relaxed)
        }
        published = (result.answered, failures)
    }
}

/// CLOCK_MONOTONIC in nanoseconds.
func monotonicNanos() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
