#if os(Linux)
import ChecklistLog
import ChecklistStorage
import ChecklistStore
import ChecklistThreads
import Foundation
import Glibc
import Synchronization
import Testing

/// The compactor yields the cores to request handling: a snapshot's thread,
/// and the compression threads it starts, run at the lowest priority
/// unless the snapshot is overdue; the compactor's own thread keeps the
/// server's, which it could not get back once lowered.
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

    @Test func theCompactorsOwnThreadKeepsTheServersPriority() throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let (_, storage) = try StorageOpener.openStore { store, _ in
            try DataDirectoryStorage(path: dir.path, policy: .everysec, store: store) { error in
                Issue.record("the log failed: \(error)")
            }
        }
        storage.startUpkeep(log: ServerLog(level: .error, maxLinesPerSecond: 10) { _ in })
        defer { try? storage.close() }
        // Its thread may not have been named yet: wait for it to appear.
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        var nice = Self.niceOfThread(named: "checklist-compa")
        while nice == nil, ContinuousClock.now < deadline {
            usleep(10_000)
            nice = Self.niceOfThread(named: "checklist-compa")
        }
        // Lowered, it could never write an overdue snapshot at the server's priority.
        #expect(nice == Int(Self.currentNice()))
    }

    /// The nice value of this process's thread named `name` (as
    /// /proc/self/task/TID/stat gives it, field 19), nil if there is none.
    static func niceOfThread(named name: String) -> Int? {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
        for task in tasks {
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                  comm.trimmingCharacters(in: .newlines) == name,
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // After "pid (comm)": state is field 3, nice field 19.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 16 ? Int(fields[16]) : nil
        }
        return nil
    }
}
#endif
