import ChecklistModel
import ChecklistSnapshot
import ChecklistSnapshotFixtures
@testable import ChecklistPersistence
import ChecklistRandom
import Foundation
import Testing

@Suite(.timeLimit(.minutes(10))) struct DataDirectoryTests {
    @Test func lockPreventsASecondOpener() throws {
        let dir = TempDirectory("lock")
        defer { dir.remove() }
        let first = try DataDirectory(path: dir.path + "/nested/data")
        #expect {
            _ = try DataDirectory(path: dir.path + "/nested/data")
        } throws: { error in
            let e = error as? PersistenceError
            return e?.code == .locked && e?.file == dir.path + "/nested/data/LOCK"
                && e?.message.contains("pid \(getpid())") == true
                && e?.message.contains("in use by another process") == true
        }
        first.close()
        let again = try DataDirectory(path: dir.path + "/nested/data")
        again.close()
    }

    /// The lock also holds against another process (flock is per open file).
    @Test func lockHoldsAcrossProcesses() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/flock") else { return }
        let dir = TempDirectory("lock-proc")
        defer { dir.remove() }
        let data = try DataDirectory(path: dir.path)
        #expect(try run("/usr/bin/flock", ["-n", dir.file("LOCK"), "true"]).status != 0)
        data.close()
        #expect(try run("/usr/bin/flock", ["-n", dir.file("LOCK"), "true"]).status == 0)
    }

    /// A live server: changes keep being logged while a snapshot is written
    /// one list at a time, so the snapshot holds some changes after its
    /// start LSN. Recovery (snapshot + replay with `ReplayRule`) must give
    /// exactly the live state.
    @Test(arguments: [1, 2])
    func snapshotOfARunningStoreRecoversExactly(threads: Int) throws {
        let dir = TempDirectory("live")
        defer { dir.remove() }
        var data: DataDirectory? = try DataDirectory(path: dir.path)
        let live = FakeStore()
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1, options: .init(policy: .no, segmentBytes: 4096))
        func commit(_ changes: [Change]) throws { for c in changes { live.apply(c); try log.append(c) } }
        // History before the snapshot.
        let before = randomHistory(count: 300, lists: 5, store: FakeStore())
        try commit(before)

        let start = log.lastLSN
        let header = SnapshotHeader(createdAt: 0, source: "test", listCount: UInt64(live.lists.count),
                                    itemCount: UInt64(live.itemCount), startLSN: start, nextListID: ListID(live.nextListID))
        var rng = SplitMix64(seed: 3)
        var written = 0
        try data!.writeSnapshot(header: header, options: .init(blockBytes: 512, compressionThreads: threads), log: log,
                                endLSN: { log.lastLSN }) { writer in
            // Interleave: each list is captured at its state of the moment,
            // and more changes are committed between lists.
            var next = ListID(0)
            while let id = live.lists.keys.filter({ $0 > next }).min() {
                try live.write(list: id, to: writer)
                next = id
                written += 1
                try commit(continueHistory(of: live, count: Int(rng.next() % 20), seed: rng.next()))
            }
        }
        #expect(written > 1)
        let after = continueHistory(of: live, count: 200, seed: 11)
        try commit(after)
        try log.close()
        data!.close()
        data = nil

        let recovered = FakeStore()
        let reopened = try DataDirectory(path: dir.path)
        defer { reopened.close() }
        let report = try Recovery.run(directory: reopened, sink: recovered) { try recovered.replay($0) }
        #expect(recovered.lists == live.lists)
        #expect(report.snapshot?.startLSN == start)
        #expect(report.nextLSN == log.lastLSN + 1)
        #expect(!recovered.skipped.isEmpty, "the snapshot held changes after its start LSN")
        #expect(report.recordsReplayed == UInt64(recovered.replayed.count + recovered.skipped.count))
    }

    /// Old segments and snapshots go only after a newer snapshot is durable,
    /// and recovery still gives everything.
    @Test func pruneKeepsWhatRecoveryNeeds() throws {
        let dir = TempDirectory("prune")
        defer { dir.remove() }
        let data = try DataDirectory(path: dir.path)
        let live = FakeStore()
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1, options: .init(policy: .always, segmentBytes: 2048))
        for round in 0..<3 {
            for c in continueHistory(of: live, count: 200, seed: UInt64(round)) {
                live.apply(c)
                try log.waitDurable(try log.append(c))
            }
            let header = SnapshotHeader(createdAt: 0, source: "test", listCount: 0, itemCount: 0,
                                        startLSN: log.lastLSN, nextListID: ListID(live.nextListID))
            try data.writeSnapshot(header: header, log: log, endLSN: { log.lastLSN }) { try live.write(to: $0) }
            let before = try LogSegments.list(in: dir.path).count
            let removed = try data.prune(keepSnapshots: 2, log: log)
            #expect(try data.snapshots().count == min(round + 1, 2))
            // Round 1 keeps round 0's snapshot, so the log from it on stays.
            #expect((removed.segments > 0) == (round != 1))
            #expect(removed.snapshots == (round == 2 ? 1 : 0))
            #expect(try LogSegments.list(in: dir.path).count == before - removed.segments)
        }
        for c in continueHistory(of: live, count: 50, seed: 99) { live.apply(c); try log.append(c) }
        try log.close()
        data.close()
        #expect(!dir.files().contains { $0.hasSuffix(".tmp") })

        let recovered = FakeStore()
        let reopened = try DataDirectory(path: dir.path)
        defer { reopened.close() }
        let report = try Recovery.run(directory: reopened, sink: recovered) { try recovered.replay($0) }
        #expect(recovered.lists == live.lists)
        #expect(report.recordsReplayed == 50)
    }

    /// Offline (no log open): recover, snapshot at the recovered LSN, prune.
    @Test func offlineSnapshotAndPrune() throws {
        let dir = TempDirectory("offline")
        defer { dir.remove() }
        let live = FakeStore()
        var next: LSN = 1
        for round in 0..<3 { // three server runs, three segments
            let log = try WriteAheadLog(directory: dir.path, nextLSN: next, options: .init(policy: .no))
            for c in continueHistory(of: live, count: 40, seed: UInt64(round)) { live.apply(c); try log.append(c) }
            try log.close()
            next = log.lastLSN + 1
        }
        #expect(try LogSegments.list(in: dir.path).count == 3)
        let data = try DataDirectory(path: dir.path)
        let store = FakeStore()
        let report = try Recovery.run(directory: data, sink: store) { try store.replay($0) }
        #expect(store.lists == live.lists)
        let header = SnapshotHeader(createdAt: 0, source: "offline", listCount: 0, itemCount: 0,
                                    startLSN: report.nextLSN - 1, nextListID: ListID(store.nextListID))
        try data.writeSnapshot(header: header, endLSN: { report.nextLSN - 1 }) { try store.write(to: $0) }
        #expect(try data.prune(log: nil).segments == 2)
        data.close()

        let again = try DataDirectory(path: dir.path)
        defer { again.close() }
        let restored = FakeStore()
        let report2 = try Recovery.run(directory: again, sink: restored) { try restored.replay($0) }
        #expect(restored.lists == live.lists)
        #expect(report2.recordsReplayed == 0)
        #expect(report2.nextLSN == report.nextLSN)
    }

    /// A snapshot finished at LSN 50 over a log that ends at 40: the log
    /// lost fsynced records, and recovery refuses to load a mixed state.
    @Test func logEndingBeforeTheSnapshotEndIsAGap() throws {
        let dir = TempDirectory("short-log")
        defer { dir.remove() }
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1, options: .init(policy: .no))
        let live = FakeStore()
        for c in continueHistory(of: live, count: 40, seed: 5) { live.apply(c); try log.append(c) }
        try log.close()
        let data = try DataDirectory(path: dir.path)
        defer { data.close() }
        let header = SnapshotHeader(createdAt: 0, source: "test", listCount: 0, itemCount: 0, startLSN: 30, nextListID: ListID(live.nextListID))
        let (file, _) = try data.writeSnapshot(header: header, endLSN: { 50 }) { try live.write(to: $0) }
        #expect {
            _ = try Recovery.run(directory: data, sink: FakeStore()) { _ in }
        } throws: { error in
            let e = error as? PersistenceError
            return e?.code == .logGap && e?.file == file.path
        }
    }

    @Test func corruptNewestSnapshotStopsRecovery() throws {
        let dir = TempDirectory("bad-snap")
        defer { dir.remove() }
        let data = try DataDirectory(path: dir.path)
        let store = SnapshotSamples.store(items: 100)
        let (file, _) = try data.writeSnapshot(header: SnapshotSamples.header(for: store, startLSN: 0), endLSN: { 0 }) { try store.write(to: $0) }
        var bytes = readFile(file.path)
        bytes.removeLast(20)
        writeFile(file.path, bytes)
        // A leftover of a crashed snapshot write is ignored and removed.
        writeFile(data.snapshotPath(startLSN: 99) + ".tmp", [1, 2, 3])
        do {
            _ = try Recovery.run(directory: data, sink: FakeStore()) { _ in }
            Issue.record("recovery must fail")
        } catch let error as PersistenceError {
            // The snapshot format's error, wrapped: its code and its message.
            #expect(error.code == .snapshot)
            #expect(error.snapshot?.code == .truncatedSnapshot)
            #expect(error.file == file.path)
            #expect(error.description == error.snapshot?.description)
            #expect(error.description.hasPrefix("TRUNCATED_SNAPSHOT: \(file.path) at offset "))
        }
        #expect(!dir.files().contains { $0.hasSuffix(".tmp") })
        data.close()
    }

    /// A snapshot whose header's start LSN is not its name's: the snapshot
    /// format's CORRUPT_SNAPSHOT, wrapped in the directory's error.
    @Test func snapshotUnderAnotherNameStopsRecovery() throws {
        let dir = TempDirectory("renamed-snap")
        defer { dir.remove() }
        let data = try DataDirectory(path: dir.path)
        defer { data.close() }
        let store = SnapshotSamples.store(items: 10)
        let (file, _) = try data.writeSnapshot(header: SnapshotSamples.header(for: store, startLSN: 0), endLSN: { 0 }) { try store.write(to: $0) }
        let renamed = data.snapshotPath(startLSN: 7)
        try FileManager.default.moveItem(atPath: file.path, toPath: renamed)
        #expect {
            _ = try Recovery.run(directory: data, sink: FakeStore()) { _ in }
        } throws: { error in
            let e = error as? PersistenceError
            return e?.code == .snapshot && e?.snapshot?.code == .corruptSnapshot && e?.file == renamed
                && e?.description == "CORRUPT_SNAPSHOT: \(renamed) at offset 0: header says start LSN 0, the file name says 7"
        }
    }

    /// The writer refusing what `body` writes comes out as the directory's
    /// error too, and leaves no file behind.
    @Test func refusedSnapshotWriteIsWrapped() throws {
        let dir = TempDirectory("refused-snap")
        defer { dir.remove() }
        let data = try DataDirectory(path: dir.path)
        defer { data.close() }
        #expect {
            try data.writeSnapshot(header: SnapshotSamples.header(for: FakeStore()), endLSN: { 0 }) { writer in
                try writer.writeItem(Item(id: ItemID(1), fields: ItemFields(text: "an item before its list")))
            }
        } throws: { error in
            let e = error as? PersistenceError
            return e?.code == .snapshot && e?.snapshot?.code == .misuse && e?.description.hasPrefix("MISUSE: ") == true
        }
        #expect(dir.files() == ["LOCK"])
    }

    @Test func failedSnapshotLeavesNothing() throws {
        let dir = TempDirectory("fail-snap")
        defer { dir.remove() }
        let data = try DataDirectory(path: dir.path)
        defer { data.close() }
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try data.writeSnapshot(header: SnapshotSamples.header(for: FakeStore()), endLSN: { 0 }) { _ in throw Boom() }
        }
        #expect(try data.snapshots().isEmpty)
        #expect(dir.files() == ["LOCK"])
    }

    /// The replay rule on its own.
    @Test func replayRule() throws {
        let patch = { (rev: Revision) in Change(namespace: .default, list: ListID(1), revision: rev, kind: .patched([])) }
        #expect(try ReplayRule.decide(patch(3), currentRevision: 5) == .skip)
        #expect(try ReplayRule.decide(patch(5), currentRevision: 5) == .skip)
        #expect(try ReplayRule.decide(patch(6), currentRevision: 5) == .apply)
        #expect(throws: PersistenceError.self) { try ReplayRule.decide(patch(8), currentRevision: 5) }
        #expect(try ReplayRule.decide(patch(8), currentRevision: nil) == .skip)
        let create = Change(namespace: .default, list: ListID(1), revision: 1, kind: .listCreated(name: "A", icon: ""))
        #expect(try ReplayRule.decide(create, currentRevision: nil) == .apply)
        #expect(try ReplayRule.decide(create, currentRevision: 4) == .skip)
        let delete = Change(namespace: .default, list: ListID(1), revision: 6, kind: .listDeleted)
        #expect(try ReplayRule.decide(delete, currentRevision: 5) == .apply)
        #expect(try ReplayRule.decide(delete, currentRevision: nil) == .skip)
    }
}
