import ChecklistStorage
import ChecklistModel
import ChecklistServer
import ChecklistSnapshot
import ChecklistStore
import Foundation
import Testing

/// The server's snapshots carry its memory of answered idempotency keys,
/// and a start from such a snapshot restores it before the log after the
/// snapshot is replayed (Protocol/SNAPSHOT.md sections 3.8 and 8).
@Suite(.timeLimit(.minutes(10))) struct ServerStorageIdempotencyTests {
    static let alice = Namespace("alice")
    static let bob = Namespace("bob")

    /// A store with its storage on `path`, as `checklistd` opens them.
    final class Server {
        let store: Store
        let storage: DataDirectoryStorage

        init(path: String) throws {
            (store, storage) = try StorageOpener.openStore { store, _ in
                try DataDirectoryStorage(path: path, policy: .always, store: store) { error in
                    Issue.record("the log failed: \(error)")
                }
            }
        }
    }

    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "checklist-durability-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func insert(_ text: String, tempRef: UInt64) -> PatchOperation {
        .insert(tempRef: tempRef, position: .end, fields: ItemFields(text: text))
    }

    /// The IDEMPOTENCY records of the snapshot file at `path`, in order.
    static func keyRecords(at path: String) throws -> [SnapshotIdempotency] {
        let reader = try SnapshotReader(path: path)
        var records: [SnapshotIdempotency] = []
        while let record = try reader.next() {
            if case .idempotency(let client) = record { records.append(client) }
        }
        return records
    }

    @Test func aRestartFromASnapshotAnswersRetriesOfPatchesFromBeforeAndAfterIt() throws {
        let path = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let beforeOps = [Self.insert("Milk", tempRef: 1), Self.insert("Eggs", tempRef: 2)]
        let afterOps = [Self.insert("Bread", tempRef: 1)]
        let before = IdempotencyKey(client: 11, sequence: 1)
        let otherNamespace = IdempotencyKey(client: 11, sequence: 1)  // the same key, another namespace: another client
        let after = IdempotencyKey(client: 11, sequence: 2)
        let list: ListID, bobList: ListID
        var answers: [PatchResult] = []
        do {
            let first = try Server(path: path)
            list = try first.store.createList(in: Self.alice, name: "Groceries", icon: "").id
            bobList = try first.store.createList(in: Self.bob, name: "Chores", icon: "").id
            answers.append(try first.store.patch(in: Self.alice, list: list, baseRevision: nil, ops: beforeOps, idempotencyKey: before))
            answers.append(try first.store.patch(in: Self.bob, list: bobList, baseRevision: nil, ops: afterOps,
                                                 idempotencyKey: otherNamespace))
            let snapshot = try first.storage.writeSnapshot()
            // The snapshot holds both clients' keys, and the log before it is not replayed.
            let records = try Self.keyRecords(at: snapshot.file.path)
            #expect(Set(records.map(\.namespace)) == [Self.alice, Self.bob])
            #expect(records.flatMap(\.answers).map(\.revision) == [2, 2])
            answers.append(try first.store.patch(in: Self.alice, list: list, baseRevision: nil, ops: afterOps, idempotencyKey: after))
            try first.storage.close()
        }

        let second = try Server(path: path)
        defer { try? second.storage.close() }
        #expect(second.storage.recovery.snapshot != nil)
        #expect(second.storage.recovery.keysRestored == 2)
        #expect(second.storage.recovery.recordsReplayed == 1)
        for (i, (ns, target, ops, key)) in [(Self.alice, list, beforeOps, before), (Self.bob, bobList, afterOps, otherNamespace),
                                           (Self.alice, list, afterOps, after)].enumerated() {
            let retry = try second.store.patch(in: ns, list: target, baseRevision: nil, ops: ops, idempotencyKey: key)
            #expect(retry.isRepeat, "retry \(i)")
            #expect(retry.revision == answers[i].revision && retry.ids == answers[i].ids, "retry \(i)")
        }
        let summary = try second.store.summary(in: Self.alice, list: list)
        #expect(summary.revision == 3 && summary.itemCount == 3)
        #expect(try second.store.summary(in: Self.bob, list: bobList).itemCount == 1)
        // Nothing was applied again, so nothing new reached the log.
        #expect(second.storage.log.lastLSN == second.storage.recovery.lastLSN)
    }

    /// An export (EXPORT, `checklistd export`) writes lists only: the memory
    /// of keys stays with the server, so one namespace's export never shows
    /// another's keys.
    @Test func anExportCarriesNoKeys() throws {
        let store = Store()
        let list = try store.createList(in: Self.alice, name: "Groceries", icon: "")
        _ = try store.patch(in: Self.alice, list: list.id, baseRevision: nil, ops: [Self.insert("Milk", tempRef: 1)],
                            idempotencyKey: IdempotencyKey(client: 1, sequence: 1))
        let (cut, _) = store.cut { () }
        #expect(cut.idempotencyMemory.answerCount == 1)
        for ns in [Self.alice, nil] as [Namespace?] {
            var bytes: [UInt8] = []
            let writer = try SnapshotWriter(header: SnapshotHeader(createdAt: 0, source: "test", listCount: 1, itemCount: 1,
                                                                   startLSN: 0, nextListID: cut.nextListID)) { bytes += $0 }
            try SnapshotExport.write(cut, namespace: ns, to: writer)
            try writer.finish(endLSN: 0)
            var offset = 0
            let reader = try SnapshotReader(name: "export") { (buffer) throws(SnapshotError) -> Int in
                let n = min(buffer.count, bytes.count - offset)
                bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + n)])) }
                offset += n
                return n
            }
            var lists = 0
            while let record = try reader.next() {
                switch record {
                case .list: lists += 1
                case .item: break
                case .idempotency: Issue.record("an export carries keys")
                }
            }
            #expect(lists == 1)
        }
    }
}
