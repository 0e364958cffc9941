import ChecklistCommandLine
import ChecklistLatency
import ChecklistModel
import ChecklistTesting
import ChecklistWire
import Foundation
import Synchronization

/// `checklist-bench rate`: `checklistd --rate-limit N` with two namespaces
/// side by side. `alice` sends PINGs one after another as fast as she can
/// (far over N), waiting `retryAfterMs` after each `RATE_LIMITED` as a
/// client should; `bob` sends at most N/2 a second (under his limit) and
/// should get every one served at once. Reported: each namespace's served
/// and refused requests a second, and bob's round-trip times, first alone,
/// then beside alice's flood.
enum RateScenario {
    /// The scenario's options, for the parser and `--help`.
    static let spec = CommandSpec(
        name: "rate", summary: "requests a second of a namespace held at --rate-limit beside one under its limit",
        details: "Starts checklistd with --tokens (alice, bob) and --rate-limit; alice floods, bob paces at half the limit.",
        options: [
            .value("--limit", "N", "the server's --rate-limit, requests a second per namespace (default 500)"),
            .value("--seconds", "S", "length of each phase (default 3)"),
            BenchOptions.json,
        ])

    /// What one namespace's client saw.
    struct Tally {
        var served = 0
        var refused = 0
        var roundTrips = LatencyHistogram()
    }

    static func run(_ args: BenchArguments) throws {
        let limit = try args.int("limit", default: 500, min: 2)
        let seconds = try args.int("seconds", default: 3, min: 1)
        let files = try TemporaryDirectory(prefix: "checklist-bench-rate")
        defer { files.remove() }
        try Data("bench-alice-token-5c1e9a7f2b4d8e60 alice\nbench-bob-token-0a9b8c7d6e5f4a31 bob\n".utf8)
            .write(to: URL(fileURLWithPath: files.appending("tokens")))
        let server = try ServerProcess.start(executable: try ProductLocator.path(of: "checklistd"), arguments: [
            "--port", "0", "--data-dir", files.appending("data"), "--tokens", files.appending("tokens"),
            "--rate-limit", String(limit),
        ])
        defer { server.stop() }
        let period = Duration.seconds(seconds)

        var report = BenchReport()
        report.add("scenario", "rate")
        report.add("rateLimit", limit)
        report.add("seconds", seconds)
        let alone = try pace(port: server.port, token: "bench-bob-token-0a9b8c7d6e5f4a31", perSecond: limit / 2, for: period)
        add(alone, as: "bobAlone", seconds: seconds, to: &report)
        let flood = Mutex<Result<Tally, any Error>?>(nil)
        let floodThread = Thread {
            flood.withLock { $0 = Result { try Self.flood(port: server.port, token: "bench-alice-token-5c1e9a7f2b4d8e60", for: period) } }
        }
        floodThread.start()
        let beside = try pace(port: server.port, token: "bench-bob-token-0a9b8c7d6e5f4a31", perSecond: limit / 2, for: period)
        while flood.withLock({ $0 == nil }) { Thread.sleep(forTimeInterval: 0.01) }  // joins the flood thread
        let alice = try flood.withLock { $0! }.get()
        add(alice, as: "aliceFlooding", seconds: seconds, to: &report)
        add(beside, as: "bobBesideFlood", seconds: seconds, to: &report)
        report.print(json: args.flag("json"))
    }

    private static func add(_ tally: Tally, as name: String, seconds: Int, to report: inout BenchReport) {
        report.add("\(name)ServedPerSecond", Double(tally.served) / Double(seconds))
        report.add("\(name)RefusedPerSecond", Double(tally.refused) / Double(seconds))
        if tally.roundTrips.count > 0 {
            report.add("\(name)P50Micros", Int(tally.roundTrips.quantile(0.5) / 1000))
            report.add("\(name)P99Micros", Int(tally.roundTrips.quantile(0.99) / 1000))
        }
    }

    /// One PING and its answer; nil when served, else the wait the server asked for.
    private static func ping(_ socket: FrameSocket, id: UInt32, into tally: inout Tally) throws -> UInt64? {
        let started = ContinuousClock.now
        try socket.send(.ping(Ping(data: [])), id: id)
        let answer = try socket.receive()
        if case .error(let message) = answer.message {
            let error = message.error
            guard error.code == .rateLimited else { throw BenchFailure(description: "PING answered \(error)") }
            tally.refused += 1
            return error.retryAfterMilliseconds ?? 1
        }
        tally.roundTrips.record(ContinuousClock.now - started)
        tally.served += 1
        return nil
    }

    private static func flood(port: UInt16, token: String, for period: Duration) throws -> Tally {
        let socket = try FrameSocket(port: port)
        defer { socket.close() }
        try socket.handshake(features: [], token: token)
        var tally = Tally()
        let end = ContinuousClock.now + period
        var id: UInt32 = 2
        while ContinuousClock.now < end {
            if let wait = try ping(socket, id: id, into: &tally) { Thread.sleep(forTimeInterval: Double(wait) / 1000) }
            id &+= 1
        }
        return tally
    }

    private static func pace(port: UInt16, token: String, perSecond: Int, for period: Duration) throws -> Tally {
        let socket = try FrameSocket(port: port)
        defer { socket.close() }
        try socket.handshake(features: [], token: token)
        var tally = Tally()
        let start = ContinuousClock.now
        let gap = Duration.seconds(1) / perSecond
        var id: UInt32 = 2
        var next = start
        while next < start + period {
            let now = ContinuousClock.now
            if next > now {
                let wait = (next - now).components
                Thread.sleep(forTimeInterval: Double(wait.seconds) + Double(wait.attoseconds) / 1e18)
            }
            _ = try ping(socket, id: id, into: &tally)
            id &+= 1
            next += gap
        }
        return tally
    }
}
