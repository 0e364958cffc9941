import ChecklistModel
import ChecklistWire

/// An IDEMPOTENCY record (0x40, Protocol/SNAPSHOT.md section 3.8): one
/// client's part of the server's memory of answered idempotency keys, so
/// that a server restarted from the snapshot still answers retries of
/// patches the snapshot holds instead of applying them again.
///
/// A client with many answers may take several records in a row, each
/// repeating `namespace`, `client` and `floor`; readers add them up in order.
public typealias SnapshotIdempotency = IdempotencyMemory.Client

// The record's encoding (Protocol/SNAPSHOT.md section 3.8).
extension IdempotencyMemory.Client {
    /// Most ids one answer's runs may cover in all: a PATCH has at most
    /// `maxBatchOps` (a u32) operations, so it never inserts more.
    public static let maxInsertedPerAnswer = UInt64(UInt32.max)

    /// Fewest body bytes of one answer (sequence, list, revision, run count).
    static let minimumAnswerBytes = 4
    /// Fewest body bytes of one run (first, count).
    static let minimumRunBytes = 2

    func encode(into w: inout WireWriter) {
        encodeHead(into: &w)
        w.writeVarint(UInt64(answers.count))
        for answer in answers { Self.encode(answer, into: &w) }
    }

    /// Namespace, client and floor: what every record of the client repeats.
    func encodeHead(into w: inout WireWriter) {
        w.writeString(namespace.rawValue)
        w.writeVarint(client)
        w.writeVarint(floor)
    }

    static func encode(_ answer: Answer, into w: inout WireWriter) {
        w.writeVarint(answer.sequence)
        w.writeVarint(answer.list.rawValue)
        w.writeVarint(answer.revision)
        w.writeVarint(UInt64(answer.inserted.count))
        for run in answer.inserted {
            w.writeVarint(run.first.rawValue)
            w.writeVarint(run.count)
        }
    }

    /// Decodes a record body. Counts are checked against the bytes left
    /// before anything is allocated, so a hostile body cannot make the
    /// reader allocate more than a small multiple of its own size.
    ///
    /// - Throws: `BAD_FIELD` for a short body, a count the rest of the body
    ///   cannot hold, a list id or run start of 0, a revision or run length
    ///   of 0, a run past the largest id, or more than
    ///   `maxInsertedPerAnswer` ids in one answer.
    static func decode(from r: inout WireReader) throws(ChecklistError) -> SnapshotIdempotency {
        let namespace = Namespace(try r.readString("namespace"))
        let client = try r.readVarint("client")
        let floor = try r.readVarint("floor")
        let count = try r.readCount("count", max: r.remaining / minimumAnswerBytes)
        var answers: [Answer] = []
        answers.reserveCapacity(count)
        for _ in 0..<count {
            let sequence = try r.readVarint("sequence")
            let list = try r.readVarint("list")
            guard list != 0 else { throw .badField("list", "list id 0") }
            let revision = try r.readVarint("revision")
            guard revision != 0 else { throw .badField("revision", "revision 0") }
            let runCount = try r.readCount("runs", max: r.remaining / minimumRunBytes)
            var runs: [ItemIDRun] = []
            runs.reserveCapacity(runCount)
            var total: UInt64 = 0
            for _ in 0..<runCount {
                let first = try r.readVarint("first")
                let length = try r.readVarint("length")
                guard first != 0 else { throw .badField("first", "item id 0") }
                guard length != 0 else { throw .badField("length", "a run of no ids") }
                guard length - 1 <= UInt64.max - first else {
                    throw .badField("length", "run of \(length) ids from \(first) passes the largest id")
                }
                guard length <= maxInsertedPerAnswer - total else {
                    throw .badField("length", "an answer with more than \(maxInsertedPerAnswer) inserted ids")
                }
                total += length
                runs.append(ItemIDRun(first: ItemID(first), count: length))
            }
            answers.append(Answer(sequence: sequence, list: ListID(list), revision: revision, inserted: runs))
        }
        return SnapshotIdempotency(namespace: namespace, client: client, floor: floor, answers: answers)
    }
}
