import ChecklistModel
import ChecklistPersistence
import ChecklistSnapshot
import ChecklistSnapshotFixtures
import Testing

/// The snapshot's IDEMPOTENCY records (Protocol/SNAPSHOT.md section 3.8)
/// and recovery.
@Suite(.timeLimit(.minutes(10))) struct RecoveryIdempotencyTests {
    /// Recovery hands the snapshot's keys to the sink before it replays the
    /// first log record after the snapshot.
    @Test func recoveryRestoresKeysBeforeItReplaysTheLog() throws {
        let dir = TempDirectory("keys-recovery")
        defer { dir.remove() }
        let live = FakeStore()
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1, options: .init(policy: .no))
        for c in randomHistory(count: 30, store: FakeStore()) { live.apply(c); try log.append(c) }
        let data = try DataDirectory(path: dir.path)
        let startLSN = log.lastLSN
        let header = SnapshotSamples.header(for: live, startLSN: startLSN)
        try data.writeSnapshot(header: header, log: log, endLSN: { startLSN }) { writer in
            try live.write(to: writer)
            for client in SnapshotSamples.clients { try writer.writeIdempotency(client) }
        }
        for c in continueHistory(of: live, count: 10, seed: 3) { live.apply(c); try log.append(c) }
        try log.close()
        data.close()

        let again = try DataDirectory(path: dir.path)
        defer { again.close() }
        let restored = FakeStore()
        var keysAtFirstReplay: [SnapshotIdempotency]?
        let report = try Recovery.run(directory: again, sink: restored) { change in
            if keysAtFirstReplay == nil { keysAtFirstReplay = restored.keys }
            try restored.replay(change)
        }
        #expect(keysAtFirstReplay == SnapshotSamples.clients)
        #expect(report.recordsReplayed == 10)
        #expect(report.keysRestored == UInt64(SnapshotSamples.clients.reduce(0) { $0 + $1.answers.count }))
        #expect(restored.lists == live.lists)
    }
}
