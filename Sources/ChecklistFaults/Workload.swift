import ChecklistModel
import ChecklistRandom

/// What every client of the workload shares: the lists, how to reach the
/// nodes, the recorder, and the bounds of the run.
public struct Workload: Sendable {
    public var lists: [ListID]
    public var nodeCount: Int
    /// The port node `index` listens on now.
    public var port: @Sendable (Int) -> UInt16
    public var recorder: Recorder
    /// No client starts an operation after this.
    public var deadline: ContinuousClock.Instant
    /// How long a client waits for an answer before it counts it lost.
    public var answerTimeout: Duration
    /// Most sendings of one patch (the first and its retries).
    public var attempts: Int
    /// Bounds on the count of operations, whatever the time.
    public var maxPatchesPerWriter: Int
    public var maxReads: Int

    public init(lists: [ListID], nodeCount: Int, port: @escaping @Sendable (Int) -> UInt16, recorder: Recorder,
                deadline: ContinuousClock.Instant, answerTimeout: Duration, attempts: Int = 6,
                maxPatchesPerWriter: Int = 50_000, maxReads: Int = 20_000) {
        self.lists = lists
        self.nodeCount = nodeCount
        self.port = port
        self.recorder = recorder
        self.deadline = deadline
        self.answerTimeout = answerTimeout
        self.attempts = attempts
        self.maxPatchesPerWriter = maxPatchesPerWriter
        self.maxReads = maxReads
    }

    var isOver: Bool { ContinuousClock.now >= deadline }
}

/// The seed of each client and of the nemesis, all from the run's one seed.
public enum Seeds {
    /// A generator for `stream` (a client number, or the nemesis's) of the run `seed`.
    public static func generator(_ seed: UInt64, stream: UInt64) -> SplitMix64 {
        var mixer = SplitMix64(seed: seed ^ (stream &* 0x9E37_79B9_7F4A_7C15))
        return SplitMix64(seed: mixer.next())
    }

    /// The stream numbers: writers 0..<100, the reader 100, subscribers
    /// 200..., the nemesis 1000.
    public static let reader: UInt64 = 100
    public static let subscribers: UInt64 = 200
    public static let nemesis: UInt64 = 1000
}

/// The text of an item an insert makes: unique to the patch (its key) and
/// the insert's place in it, so the checker can tell where every row came
/// from. `w3.17.0` is writer 3's key 17, first insert.
public enum ItemText {
    public static func insert(_ key: IdempotencyKey, _ n: Int) -> String { "w\(key.client).\(key.sequence).\(n)" }
    public static func edit(_ key: IdempotencyKey, _ n: Int) -> String { "e\(key.client).\(key.sequence).\(n)" }

    /// The key and number a text was made from, or nil for a foreign text.
    public static func parse(_ text: String) -> (key: IdempotencyKey, n: Int, edit: Bool)? {
        guard let first = text.first, first == "w" || first == "e" else { return nil }
        let parts = text.dropFirst().split(separator: ".")
        guard parts.count == 3, let client = UInt64(parts[0]), let sequence = UInt64(parts[1]), let n = Int(parts[2]) else { return nil }
        return (IdempotencyKey(client: client, sequence: sequence), n, first == "e")
    }
}
