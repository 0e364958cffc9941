import ChecklistModel
import ChecklistFrames
import ChecklistWire

/// Runs catalogue cases against a server and wraps each with the checks
/// every case shares:
///
/// 1. a setup connection (HELLO with the target's token) creates the
///    case's fixture list and reads a snapshot of the namespace;
/// 2. the case runs, on connections of its own;
/// 3. a second, fresh connection must complete HELLO and answer a PING,
///    and its snapshot must equal the first (nothing was changed: bad input
///    changes nothing, and happy-path cases delete what they create);
/// 4. the fixture is deleted.
///
/// The namespace should not be changed by anyone else meanwhile.
public enum ConformanceRunner {
    /// How one case went.
    public struct Result: Sendable {
        public enum Status: String, Sendable { case passed = "PASS", failed = "FAIL", skipped = "SKIP" }
        public var testCase: ConformanceCase
        public var status: Status
        /// Why it failed or was skipped.
        public var detail: String?
        public var duration: Duration

        public var line: String {
            var text = "\(status.rawValue) \(testCase.id): \(testCase.input)"
            if let detail { text += "\n     " + detail }
            return text
        }
    }

    /// Runs `testCase` against `target`.
    public static func run(_ testCase: ConformanceCase, against target: Target) -> Result {
        let start = ContinuousClock.now
        func result(_ status: Result.Status, _ detail: String?) -> Result {
            Result(testCase: testCase, status: status, detail: detail, duration: ContinuousClock.now - start)
        }
        guard target.satisfies(testCase.requirement) else {
            let needs = testCase.requirement == .token ? "--token" : "--token and --second-token"
            return result(.skipped, "needs a server with access control and \(needs)")
        }
        do {
            try runChecked(testCase, against: target)
            return result(.passed, nil)
        } catch {
            return result(.failed, "\(error)")
        }
    }

    /// Runs every case in order; `report` sees each result as it comes.
    public static func runAll(_ cases: [ConformanceCase] = Catalogue.all, against target: Target,
                              report: (Result) -> Void = { _ in }) -> [Result] {
        cases.map { testCase in
            let r = run(testCase, against: target)
            report(r)
            return r
        }
    }

    private static func runChecked(_ testCase: ConformanceCase, against target: Target) throws {
        let setup: FrameSocket
        let hello: HelloOK
        do {
            setup = try target.connect()
            hello = try setup.handshake(token: target.token, name: "checklist-conformance/setup")
        } catch {
            throw CaseFailure("setup: \(error)")
        }
        defer { setup.close() }
        let fixture = try Fixture.create(over: setup, name: "conformance \(testCase.id)")
        let before = try StoreSnapshot.read(over: setup, limits: hello.limits)
        let context = CaseContext(target: target, limits: hello.limits, fixture: fixture, outcome: testCase.outcome)

        var failure: (any Error)?
        do {
            try testCase.body(context)
        } catch {
            failure = error
        }

        // Another connection still gets through and sees the same data.
        do {
            let second = try target.connect()
            defer { second.close() }
            try second.handshake(token: target.token, name: "checklist-conformance/check")
            try second.expectAlive()
            let after = try StoreSnapshot.read(over: second, limits: hello.limits)
            if failure == nil, let difference = after.difference(from: before) {
                failure = CaseFailure("the stored data changed: \(difference)")
            }
            try fixture.delete(over: second)
        } catch {
            throw CaseFailure((failure.map { "\($0); " } ?? "") + "afterwards, a second connection failed: \(error)")
        }
        if let failure { throw failure }
    }
}
