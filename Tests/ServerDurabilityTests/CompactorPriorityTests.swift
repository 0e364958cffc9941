#if os(Linux)
import ChecklistLog
import ChecklistStorage
import ChecklistModel
import ChecklistStore
import ChecklistThreads
import Glibc
import Synchronization
import Testing

/// The compactor yields the cores to request handling: a snapshot's thread,
/// and the compression threads it starts, run at the lowest priority
/// unless the snapshot is overdue.
@Suite(.timeLimit(.minutes(10))) struct CompactorPriorityTests {
    /// The calling thread's nice value.
    static func currentNice() -> Int32 {
        getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    }

    @Test func aLoweredThreadAndTheThreadsItStartsRunAtNice19() {
        let before = Self.currentNice()
        let seen = Mutex<[Int32]>([])
        NativeThread.spawn(name: "test-lowered") {
            let lowered = NativeThread.lowerCurrentPriority()
            let own = Self.currentNice()
            let child = NativeThread.spawn(name: "test-child") { seen.withLock { $0.append(Self.currentNice()) } }
            child.join()
            seen.withLock { $0.insert(lowered ? own : -1, at: 0) }
        }.join()
        #expect(seen.withLock { $0 } == [19, 19])
        #expect(Self.currentNice() == before)
    }

    @Test func workRunAndJoinedIsLoweredOnlyWhenAsked() {
        let before = Self.currentNice()
        let lowered = NativeThread.runAndJoin(name: "test-lowered", lowered: true) { Self.currentNice() }
        let asIs = NativeThread.runAndJoin(name: "test-as-is", lowered: false) { Self.currentNice() }
        #expect(lowered == 19)
        #expect(asIs == before)
        #expect(Self.currentNice() == before)
    }

    /// A snapshot due after one logged change is overdue after two: the
    /// compactor writes it at the server's priority and says so. Waits for
    /// the `event=snapshot` line (the compactor checks once a second).
    @Test(arguments: [1, 2])
    func anOverdueSnapshotSaysSo(changes: Int) throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let (store, storage) = try StorageOpener.openStore { store, _ in
            try DataDirectoryStorage(path: dir.path, policy: .everysec, snapshots: SnapshotPolicy(records: 1, growthPercent: 0),
                                     store: store) { error in
                Issue.record("the log failed: \(error)")
            }
        }
        // Logged before the compactor's first check, a second from now.
        for i in 0..<changes { _ = try store.createList(in: .default, name: "L\(i)", icon: "") }
        let lines = Mutex<[String]>([])
        let written = Latch(count: 1)
        storage.startUpkeep(log: ServerLog(level: .info, maxLinesPerSecond: 100) { line in
            guard line.contains("event=snapshot ") else { return }
            lines.withLock { $0.append(line) }
            written.countDown()
        })
        defer { try? storage.close() }
        #expect(written.wait(until: .now.advanced(by: .seconds(60))))
        let line = try #require(lines.withLock { $0.first })
        #expect(line.contains("overdue=\(changes == 2)"), "\(line)")
    }
}
#endif
