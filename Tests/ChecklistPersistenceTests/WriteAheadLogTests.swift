import ChecklistModel
import ChecklistSnapshot
import ChecklistSnapshotFixtures
import Foundation
import Glibc
import Testing
@testable import ChecklistPersistence

@Suite(.timeLimit(.minutes(10))) struct WriteAheadLogTests {
    @Test func appendReopenReplayIsIdentical() throws {
        let dir = TempDirectory("wal")
        defer { dir.remove() }
        let history = everyKindOfChange + randomHistory(count: 500, store: FakeStore())
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1, options: .init(policy: .always))
        for (i, change) in history.enumerated() {
            #expect(try log.append(change) == LSN(i + 1))
        }
        try log.waitDurable(log.lastLSN)
        #expect(log.durableLSN == LSN(history.count))
        try log.close()

        let (replayed, report) = try recover(dir)
        #expect(replayed == history)
        #expect(report.nextLSN == LSN(history.count + 1))
        #expect(report.tornTail == nil)

        // Reopen, append more, recover everything.
        let more = randomHistory(count: 50, seed: 99, store: FakeStore())
        let log2 = try WriteAheadLog(directory: dir.path, nextLSN: report.nextLSN, options: .init(policy: .no))
        for change in more { try log2.append(change) }
        try log2.close()
        let (all, report2) = try recover(dir)
        #expect(all == history + more)
        #expect(report2.nextLSN == LSN(history.count + more.count + 1))
        #expect(dir.files().filter { $0.hasPrefix("wal-") }.count == 2)
    }

    /// A batch of patches' commits, appended together, are the same
    /// records, byte for byte, as the same changes appended one at a time.
    @Test func appendEachWritesTheRecordsOfAppendsOneAtATime() throws {
        let history = everyKindOfChange.filter { if case .patched = $0.kind { true } else { false } }
            + randomHistory(count: 300, store: FakeStore()).filter { if case .patched = $0.kind { true } else { false } }
        #expect(history.count > 100)
        func segmentBytes(_ append: (WriteAheadLog) throws -> Void) throws -> [UInt8] {
            let dir = TempDirectory("wal-each")
            defer { dir.remove() }
            let log = try WriteAheadLog(directory: dir.path, nextLSN: 1, options: .init(policy: .no))
            try append(log)
            #expect(log.lastLSN == LSN(history.count))
            try log.close()
            #expect(try recover(dir).changes == history)
            return Array(try Data(contentsOf: URL(fileURLWithPath: LogSegments.path(in: dir.path, firstLSN: 1))))
        }
        let alone = try segmentBytes { log in for change in history { try log.append(change) } }
        let batched = try segmentBytes { log in
            var next = 0
            for size in [1, 7, 64, 3] + Array(repeating: 10, count: history.count / 10) where next < history.count {
                let batch = Array(history[next..<min(history.count, next + size)])
                let last = try log.appendEach(batch)
                #expect(last == LSN(next + batch.count))
                next += batch.count
            }
        }
        #expect(batched == alone)
    }

    /// Under `.always` the log lays zeros ahead of its records, so that an
    /// fsync writes the records alone: a crash then leaves zeros after the
    /// last record, which recovery cuts off; a clean close leaves none.
    @Test func alwaysLaysZerosAheadOfItsRecords() throws {
        let dir = TempDirectory("wal-zeros")
        let crashed = TempDirectory("wal-zeros-crashed")
        defer { dir.remove(); crashed.remove() }
        let history = randomHistory(count: 300, store: FakeStore())
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1, options: .init(policy: .always))
        #expect(log.options.preallocationBytes == 1 << 20)
        for change in history { try log.append(change) }
        try log.waitDurable(log.lastLSN)
        let name = LogRecordFormat.segmentName(firstLSN: 1)
        let open = readFile(dir.path + "/" + name)
        #expect(open.count >= 1 << 20)
        // What a crash now leaves: records, then zeros; recovery cuts the zeros.
        writeFile(crashed.path + "/" + name, open)
        let (afterCrash, crashReport) = try recover(crashed)
        #expect(afterCrash == history)
        let cut = try #require(crashReport.tornTail)
        #expect(cut.reason == "zeros after the last record")
        #expect(open[Int(cut.offset)...].allSatisfy { $0 == 0 })
        #expect(readFile(crashed.path + "/" + name).count == Int(cut.offset))
        // A clean close cuts them itself.
        try log.close()
        #expect(readFile(dir.path + "/" + name) == Array(open[..<Int(cut.offset)]))
        let (afterClose, closeReport) = try recover(dir)
        #expect(afterClose == history)
        #expect(closeReport.tornTail == nil)
    }

    /// Other policies (and `preallocationBytes: 0`) write records alone:
    /// what a crash leaves has no tail to cut.
    @Test func withoutPreallocationTheSegmentEndsAtItsRecords() throws {
        let name = LogRecordFormat.segmentName(firstLSN: 1)
        for options in [WriteAheadLog.Options(policy: .everysec), .init(policy: .always, preallocationBytes: 0)] {
            let dir = TempDirectory("wal-no-zeros")
            let crashed = TempDirectory("wal-no-zeros-crashed")
            defer { dir.remove(); crashed.remove() }
            #expect(options.preallocationBytes == 0)
            let log = try WriteAheadLog(directory: dir.path, nextLSN: 1, options: options)
            for change in everyKindOfChange { try log.append(change) }
            try log.waitDurable(log.lastLSN)
            writeFile(crashed.path + "/" + name, readFile(dir.path + "/" + name))
            let (changes, report) = try recover(crashed)
            #expect(changes == everyKindOfChange)
            #expect(report.tornTail == nil)
            try log.close()
        }
    }

    @Test func rotatesSegmentsAndRemovesOldOnes() throws {
        let dir = TempDirectory("wal-rotate")
        defer { dir.remove() }
        let history = randomHistory(count: 2000, store: FakeStore())
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1,
                                    options: .init(policy: .always, segmentBytes: 8 * 1024))
        for change in history {
            let lsn = try log.append(change)
            if lsn % 100 == 0 { try log.waitDurable(lsn) } // several batches, so several segments
        }
        try log.waitDurable(log.lastLSN)
        let segments = log.segments
        #expect(segments.count > 5)
        #expect(segments.first == 1)
        #expect(segments == segments.sorted())
        #expect(try LogSegments.list(in: dir.path) == segments)
        try log.close()
        #expect(try recover(dir).changes == history)

        // Remove segments that only hold records below the third segment's start.
        let log2 = try WriteAheadLog(directory: dir.path, nextLSN: LSN(history.count + 1), options: .init(policy: .no))
        #expect(try log2.removeSegments(before: segments[2]) == 2)
        #expect(try LogSegments.list(in: dir.path).first == segments[2])
        #expect(try log2.removeSegments(before: segments[2]) == 0)
        try log2.close()
        // Without a snapshot holding the removed records, recovery refuses.
        #expect { try recover(dir) } throws: { ($0 as? PersistenceError)?.code == .logGap }
    }

    /// Starts `count` threads running `body(index)` and waits for them all.
    func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let done = DispatchGroup()
        for i in 0..<count {
            done.enter()
            Thread.detachNewThread {
                body(i)
                done.leave()
            }
        }
        done.wait()
    }

    /// Group commit, deterministically: the first fsync is held (through the
    /// injectable hook, not by timing) until all 16 threads have appended,
    /// so the records appended meanwhile must share the next fsync.
    @Test func groupCommitSharesFsyncs() throws {
        let dir = TempDirectory("wal-group")
        defer { dir.remove() }
        let threads = 16
        let fsyncs = Counter()
        let appended = Counter()
        // Opened by the last thread to append.
        let allAppended = DispatchSemaphore(value: 0)
        let armed = Locked(false)
        let options = WriteAheadLog.Options(policy: .always, syncFile: { fd in
            if armed.value {
                fsyncs.increment()
                // Hold this fsync until everyone has appended (bounded).
                if allAppended.wait(timeout: .now() + 10) == .success { allAppended.signal() }
            }
            return Glibc.fsync(fd) == 0 ? 0 : errno
        })
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1, options: options)
        armed.withLock { $0 = true }
        let failures = Counter()
        onThreads(threads) { _ in
            do {
                let lsn = try log.append(everyKindOfChange[2])
                appended.increment()
                if appended.count == threads { allAppended.signal() }
                try log.waitDurable(lsn)
                if log.durableLSN < lsn { failures.increment() }
            } catch { failures.increment() }
        }
        #expect(failures.count == 0)
        #expect(log.durableLSN == LSN(threads))
        #expect(fsyncs.count <= 2, "group commit: \(fsyncs.count) fsyncs for \(threads) appends")
        try log.close()
        #expect(try recover(dir).changes.count == threads)
    }

    /// Many threads appending and each waiting for durability, with a slow
    /// disk: every record ends durable, `onDurable` reports increasing LSNs,
    /// and there are never more fsyncs than appends.
    @Test func concurrentAppendersAllBecomeDurable() throws {
        let dir = TempDirectory("wal-concurrent")
        defer { dir.remove() }
        let fsyncs = Counter()
        let durableCalls = Counter()
        let lastReported = Locked<LSN>(0)
        let options = WriteAheadLog.Options(policy: .always, onDurable: { lsn in
            durableCalls.increment()
            lastReported.withLock { last in
                precondition(lsn > last, "onDurable must report increasing LSNs")
                last = lsn
            }
        }, syncFile: { fd in
            fsyncs.increment()
            return Glibc.fsync(fd) == 0 ? 0 : errno
        })
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1, options: options)
        let threads = 8, perThread = 100
        let failures = Counter()
        onThreads(threads) { _ in
            for _ in 0..<perThread {
                do {
                    let lsn = try log.append(everyKindOfChange[2])
                    try log.waitDurable(lsn)
                    if log.durableLSN < lsn { failures.increment() }
                } catch { failures.increment() }
            }
        }
        let appends = threads * perThread
        #expect(failures.count == 0)
        #expect(log.durableLSN == LSN(appends))
        let recordFsyncs = fsyncs.count - 1 // the first is the new segment's header
        #expect(recordFsyncs <= appends)
        try log.close() // joins the flusher: every onDurable call has returned
        #expect(lastReported.value == LSN(appends))
        #expect(durableCalls.count <= recordFsyncs)
        #expect(try recover(dir).changes.count == appends)
    }

    @Test func failedFsyncStopsTheLog() throws {
        let dir = TempDirectory("wal-fail")
        defer { dir.remove() }
        let failNow = Locked(false)
        let reported = Locked<PersistenceError?>(nil)
        let options = WriteAheadLog.Options(policy: .always, onFailure: { e in reported.withLock { $0 = e } },
                                            syncFile: { fd in failNow.value ? EIO : (Glibc.fsync(fd) == 0 ? 0 : errno) })
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1, options: options)
        try log.waitDurable(try log.append(everyKindOfChange[0]))
        failNow.withLock { $0 = true }
        let lsn = try log.append(everyKindOfChange[1])
        #expect { try log.waitDurable(lsn) } throws: { ($0 as? PersistenceError)?.code == .logFailed }
        #expect(log.durableLSN == 1)
        #expect(reported.value?.errno == EIO)
        #expect(log.failure?.code == .io)
        #expect { try log.append(everyKindOfChange[2]) } throws: { ($0 as? PersistenceError)?.code == .logFailed }
        #expect { try log.close() } throws: { ($0 as? PersistenceError)?.code == .logFailed }
    }

    @Test func everysecSyncsWithinItsInterval() throws {
        let dir = TempDirectory("wal-everysec")
        defer { dir.remove() }
        let durable = Counter()
        let all = LSN(everyKindOfChange.count)
        let reachedAll = DispatchSemaphore(value: 0)
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1,
                                    options: .init(policy: .everysec, everysecIntervalNanoseconds: 50_000_000,
                                                   onDurable: { lsn in
                                                       durable.increment()
                                                       if lsn >= all { reachedAll.signal() }
                                                   }))
        for change in everyKindOfChange { try log.append(change) }
        // No one asks; the flusher's clock must make it durable.
        _ = reachedAll.wait(timeout: .now() + 10)
        #expect(log.durableLSN == LSN(everyKindOfChange.count))
        #expect(durable.count >= 1)
        try log.close()
    }

    @Test func noPolicyWritesWithoutFsyncUntilAsked() throws {
        let dir = TempDirectory("wal-no")
        defer { dir.remove() }
        let fsyncs = Counter()
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1, options: .init(policy: .no, syncFile: { fd in
            fsyncs.increment()
            return Glibc.fsync(fd) == 0 ? 0 : errno
        }))
        for change in everyKindOfChange { try log.append(change) }
        // Written promptly: another reader of the file sees the records.
        let segment = LogSegments.path(in: dir.path, firstLSN: 1)
        let deadline = Date().addingTimeInterval(10)
        // No event says "written" under `.no`: poll the file itself, bounded.
        while readFile(segment).count <= LogRecordFormat.segmentHeaderBytes && Date() < deadline { sched_yield() }
        #expect(readFile(segment).count > LogRecordFormat.segmentHeaderBytes)
        #expect(fsyncs.count == 1) // only the segment header
        #expect(log.durableLSN == 0)
        try log.waitDurable(log.lastLSN)
        #expect(log.durableLSN == LSN(everyKindOfChange.count))
        #expect(fsyncs.count == 2)
        try log.close()
    }

    /// Appends `history` one change at a time, or (`batched`) its patches
    /// in batches of 10 through `appendEach` and every other change alone,
    /// in order.
    func append(_ history: [Change], to log: WriteAheadLog, batched: Bool) throws {
        guard batched else {
            for change in history { try log.append(change) }
            return
        }
        var batch: [Change] = []
        for change in history {
            if case .patched = change.kind {
                batch.append(change)
                if batch.count == 10 { try log.appendEach(batch); batch.removeAll() }
                continue
            }
            if !batch.isEmpty { try log.appendEach(batch); batch.removeAll() }
            try log.append(change)
        }
        if !batch.isEmpty { try log.appendEach(batch) }
    }

    /// Under `.everysec`, once `writeBehindBytes` are buffered the flusher
    /// writes them out long before the interval, without an fsync: the
    /// buffers stay small, and durability still waits for the clock; the
    /// same for batches of patches.
    @Test(arguments: [false, true])
    func everysecWritesBehindWithoutFsyncBeforeItsInterval(batched: Bool) throws {
        let dir = TempDirectory("wal-write-behind")
        defer { dir.remove() }
        let fsyncs = Counter()
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1, options: .init(
            policy: .everysec, writeBehindBytes: 1024, everysecIntervalNanoseconds: 3_600_000_000_000,
            syncFile: { fd in
                fsyncs.increment()
                return Glibc.fsync(fd) == 0 ? 0 : errno
            }))
        let history = randomHistory(count: 400, store: FakeStore())
        try append(history, to: log, batched: batched)
        let segment = LogSegments.path(in: dir.path, firstLSN: 1)
        // No event says "written" without an fsync: poll the file itself, bounded.
        let deadline = Date().addingTimeInterval(10)
        while readFile(segment).count <= LogRecordFormat.segmentHeaderBytes + 1024 && Date() < deadline { sched_yield() }
        #expect(readFile(segment).count > LogRecordFormat.segmentHeaderBytes + 1024)
        #expect(fsyncs.count == 1) // only the segment header: the hour has not passed
        #expect(log.durableLSN == 0)
        try log.close()
        #expect(try recover(dir).changes == history)
    }

    /// Appends past `maxBufferedBytes` wait for the flusher, and lose
    /// nothing, one change at a time or in batches of patches.
    @Test(arguments: [false, true])
    func boundedBufferAppliesBackpressure(batched: Bool) throws {
        let dir = TempDirectory("wal-bp")
        defer { dir.remove() }
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1, options: .init(policy: .everysec, maxBufferedBytes: 512))
        let history = randomHistory(count: 3000, store: FakeStore())
        try append(history, to: log, batched: batched)
        try log.close()
        #expect(try recover(dir).changes == history)
    }

    @Test func closedLogRefusesAppends() throws {
        let dir = TempDirectory("wal-closed")
        defer { dir.remove() }
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 1)
        try log.close()
        try log.close()
        #expect { try log.append(everyKindOfChange[0]) } throws: { ($0 as? PersistenceError)?.code == .logClosed }
    }

    @Test func openingRefusesALogAheadOfNextLSN() throws {
        let dir = TempDirectory("wal-ahead")
        defer { dir.remove() }
        let log = try WriteAheadLog(directory: dir.path, nextLSN: 10)
        try log.append(everyKindOfChange[0])
        try log.close()
        #expect { try WriteAheadLog(directory: dir.path, nextLSN: 5) } throws: { ($0 as? PersistenceError)?.code == .misuse }
        #expect { try WriteAheadLog(directory: dir.path, nextLSN: 10) } throws: { ($0 as? PersistenceError)?.code == .misuse }
    }
}
