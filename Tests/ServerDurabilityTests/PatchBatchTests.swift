import ChecklistModel
@testable import ChecklistServer
@testable import ChecklistStorage
import ChecklistPersistence
import ChecklistStore
import ChecklistTesting
import ChecklistWire
import Foundation
import Testing

/// The PATCHes one read brings in are applied as one batch (one hold of
/// the store's lock, one log append, one publish): a pipelined run of them
/// gets exactly the answers, revisions and log records the same PATCHes get
/// one at a time, with keys, a retry, refusals in the middle, and under
/// each fsync policy.
@Suite(.timeLimit(.minutes(2)))
struct PatchBatchTests {
    /// What a connection saw of one answer.
    struct Seen: Equatable, CustomStringConvertible {
        var requestID: UInt32
        var message: ServerMessage
        var description: String { "\(requestID): \(message)" }
    }

    /// The requests, in order: keyed and plain inserts, a toggle of an item
    /// that does not exist (refused), an undecodable PATCH (refused), a
    /// retry of the first key (answered from memory), a stale base revision
    /// (refused), a toggle of the item a keyed insert made, and inserts
    /// after the refusals.
    static func frames(list: ListID) -> [[UInt8]] {
        func frame(_ patch: Patch, _ id: UInt32) -> [UInt8] {
            var w = WireWriter()
            var encoder = FrameEncoder(compress: false)
            encoder.append(patch, requestID: id, to: &w)
            return w.bytes
        }
        func insert(_ text: String, tempRef: UInt64? = nil) -> PatchOperation {
            .insert(tempRef: tempRef, position: .end, fields: ItemFields(text: text))
        }
        let first = IdempotencyKey(client: 77, sequence: 1)
        var undecodable = WireWriter()
        var encoder = FrameEncoder(compress: false)
        encoder.append(type: .patch, requestID: 14, to: &undecodable) { w in
            w.writeVarint(list.rawValue)
            w.writeU8(0)
            w.writeVarint(1)
            w.writeU8(0x7F)  // no such opcode
        }
        return [
            frame(Patch(list: list, idempotencyKey: first, ops: [insert("milk", tempRef: 1), insert("eggs", tempRef: 2)]), 11),
            frame(Patch(list: list, ops: [insert("bread")]), 12),
            frame(Patch(list: list, ops: [.toggle(.id(ItemID(999)))]), 13),
            undecodable.bytes,
            frame(Patch(list: list, idempotencyKey: first, ops: [insert("milk", tempRef: 1), insert("eggs", tempRef: 2)]), 15),
            frame(Patch(list: list, baseRevision: 1, ops: [insert("late")]), 16),
            frame(Patch(list: list, idempotencyKey: IdempotencyKey(client: 77, sequence: 2), ops: [.toggle(.id(ItemID(1)))]), 17),
            frame(Patch(list: list, ops: [insert("butter"), insert("jam", tempRef: 9)]), 18),
        ]
    }

    /// A server on a new data directory with one empty list; runs `body`
    /// with a connection to it, then stops it and returns what `body` saw,
    /// the list as a restart from the log finds it, and the records replayed.
    static func run(fsync: FsyncPolicy, _ body: (FrameSocket, ListID) throws -> [Seen])
        throws -> (seen: [Seen], rows: [Item], revision: Revision, replayed: UInt64) {
        let directory = try TemporaryDirectory(prefix: "checklist-patch-batch")
        defer { directory.remove() }
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.threads = 1
        configuration.logLevel = .error
        let list: ListID
        let seen: [Seen]
        do {
            let service = try ChecklistService(ServiceOptions(
                configuration: configuration, storage: .dataDirectory(directory.path, fsync: fsync)) { error in
                    Issue.record("the log failed: \(error)")
                })
            defer { _ = try? service.shutdown(timeout: .seconds(20)) }
            list = try service.store.createList(in: .default, name: "Batch", icon: "").id
            let socket = try FrameSocket(port: service.server.port)
            defer { socket.close() }
            try socket.handshake(features: [])
            seen = try body(socket, list)
        }
        // A restart finds every acknowledged patch, each its own record.
        let store = Store()
        let storage = try DataDirectoryStorage(path: directory.path, policy: fsync, store: store) { error in
            Issue.record("the log failed: \(error)")
        }
        defer { try? storage.close() }
        let rows = try store.page(in: .default, list: list, start: .offset(0), limit: 100, filter: .all).items
        let revision = try store.summary(in: .default, list: list).revision
        return (seen, rows, revision, storage.recovery.recordsReplayed)
    }

    /// A STATS request after the PATCHes, and what it was answered.
    static func stats(_ socket: FrameSocket) throws -> Seen {
        try socket.send(.stats(Stats()), id: 99)
        let answer = try socket.receive()
        return Seen(requestID: answer.header.requestID, message: answer.message)
    }

    @Test(arguments: [FsyncPolicy.always, .everysec])
    func aPipelinedBatchIsAnsweredAsTheSamePatchesOneAtATime(fsync: FsyncPolicy) throws {
        let deadline = ContinuousClock.now + .seconds(30)
        let batched = try Self.run(fsync: fsync) { socket, list in
            let frames = Self.frames(list: list)
            // One write: the server reads them together and applies them as one batch.
            return try socket.pump(frames.flatMap { $0 }, expecting: frames.count, deadline: deadline)
                .map { Seen(requestID: $0.header.requestID, message: $0.message) } + [Self.stats(socket)]
        }
        let alone = try Self.run(fsync: fsync) { socket, list in
            try Self.frames(list: list).map { frame in
                try socket.send(frame)
                let answer = try socket.receive()
                return Seen(requestID: answer.header.requestID, message: answer.message)
            } + [Self.stats(socket)]
        }
        // STATS counts each PATCH of the batch, as each one alone: 8, 3 refused.
        let counted = [batched.seen, alone.seen].map { seen -> (StatsReport.TypeCount?, UInt64?, UInt64?) in
            guard case .statsReport(let report)? = seen.last?.message else { return (nil, nil, nil) }
            return (report.requests.first { $0.type == .patch }, report.latency.count,
                    report.requests.reduce(0) { $0 + $1.requests })
        }
        #expect(counted[0].0 == StatsReport.TypeCount(type: .patch, requests: 8, errors: 3))
        #expect(counted[1].0 == counted[0].0)
        // A latency sample for every request counted (the STATS itself is counted after its answer).
        #expect(counted[0].1 != nil && counted[0].1 == counted[0].2)
        #expect(counted[1].1 == counted[0].1 && counted[1].2 == counted[0].2)
        let batchedAnswers = Array(batched.seen.dropLast()), aloneAnswers = Array(alone.seen.dropLast())
        #expect(batchedAnswers == aloneAnswers)
        #expect(batchedAnswers.map(\.requestID) == [11, 12, 13, 14, 15, 16, 17, 18])
        // Applied: 11, 12, 17, 18 (the list's revisions 2...5); 15 repeats 11's answer.
        let revisions = batchedAnswers.map { seen -> Revision? in
            if case .patchOK(let ok) = seen.message { return ok.revision }
            return nil
        }
        #expect(revisions == [2, 3, nil, nil, 2, nil, 4, 5])
        let codes = batchedAnswers.map { seen -> ChecklistError.Code? in
            if case .error(let message) = seen.message { return message.error.code }
            return nil
        }
        #expect(codes == [nil, nil, .notFound, .badField, nil, .conflict, nil, nil])
        #expect(batched.rows == alone.rows)
        #expect(batched.rows.map(\.fields.text) == ["milk", "eggs", "bread", "butter", "jam"])
        #expect(batched.revision == 5 && alone.revision == 5)
        // The creation and the four applied patches, one record each.
        #expect(batched.replayed == 5 && alone.replayed == 5)
    }
}
