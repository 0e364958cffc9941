import ChecklistModel
import ChecklistRandom
@testable import ChecklistServer
import ChecklistWire
import Testing

/// The change feed against a naive reference of the same retention policy:
/// per list the last `retainPerList` changes, in all at most `maxBytes`
/// (oldest published first out), a deleted list's changes dropped; and
/// CHANGES_SINCE answers exactly what is retained, or RESYNC_REQUIRED.
@Suite(.timeLimit(.minutes(10))) struct ChangeFeedTests {
    /// The policy spelled out on a flat array, in publish order.
    struct Reference {
        struct Entry { var list: ListID; var revision: Revision; var bytes: Int }
        let retainPerList: Int
        let maxBytes: Int
        var entries: [Entry] = []

        mutating func append(_ change: EncodedChange) {
            if change.isDeletion {
                entries.removeAll { $0.list == change.list }
                return
            }
            if let last = entries.last(where: { $0.list == change.list }), last.revision + 1 != change.revision {
                entries.removeAll { $0.list == change.list }
            }
            entries.append(Entry(list: change.list, revision: change.revision, bytes: change.frame.count))
            while entries.filter({ $0.list == change.list }).count > retainPerList {
                entries.remove(at: entries.firstIndex { $0.list == change.list }!)
            }
            while entries.reduce(0, { $0 + $1.bytes }) > maxBytes { entries.removeFirst() }
        }

        func retained(_ list: ListID) -> ClosedRange<Revision>? {
            let revisions = entries.filter { $0.list == list }.map(\.revision)
            guard let first = revisions.first, let last = revisions.last else { return nil }
            return first...last
        }
    }

    static func change(_ list: ListID, _ revision: Revision, textBytes: Int) -> EncodedChange {
        let op = AppliedOperation.setText(ItemID(1), String(repeating: "x", count: textBytes))
        return EncodedChange(Change(namespace: .default, list: list, revision: revision, kind: .patched([op])),
                             maxFrameBytes: 1 << 20)
    }

    @Test(arguments: [(3, 2_000), (1, 500), (8, 100_000), (0, 1_000)])
    func retentionMatchesTheReference(retainPerList: Int, maxBytes: Int) {
        var rng = SplitMix64(seed: UInt64(retainPerList * 7919 + maxBytes))
        var feed = ChangeFeed(ChangeFeed.Configuration(retainPerList: retainPerList, maxBytes: maxBytes))
        var reference = Reference(retainPerList: retainPerList, maxBytes: maxBytes)
        var revisions: [ListID: Revision] = [:]
        var published: [ListID: [Revision: EncodedChange]] = [:]
        // Five lists at a time; a deleted one is replaced by a new id (ids are never reused).
        var slots = (1...5).map { ListID(UInt64($0)) }
        var nextID: UInt64 = 6
        for _ in 0..<600 {
            let slot = Int(rng.next() % 5)
            let list = slots[slot]
            let change: EncodedChange
            if rng.next() % 40 == 0, let current = revisions[list] {
                change = EncodedChange(Change(namespace: .default, list: list, revision: current + 1, kind: .listDeleted),
                                       maxFrameBytes: 1 << 20)
                revisions[list] = nil
                published[list] = nil
                slots[slot] = ListID(nextID)
                nextID += 1
            } else {
                let revision = (revisions[list] ?? 0) + 1
                revisions[list] = revision
                change = Self.change(list, revision, textBytes: Int(rng.next() % 300))
                published[list, default: [:]][revision] = change
            }
            feed.append(change)
            reference.append(change)
            for id in (1..<nextID).map({ ListID($0) }) {
                #expect(feed.retained(id) == reference.retained(id), "list \(id)")
            }
            #expect(feed.retainedBytes <= maxBytes)
            #expect(feed.retainedBytes == reference.entries.reduce(0) { $0 + $1.bytes })
            // CHANGES_SINCE from every revision of a random list.
            let probe = slots[Int(rng.next() % 5)]
            guard let current = revisions[probe] else { continue }
            for since in 0...current {
                let answer = feed.changes(of: probe, after: since, current: current, limit: 4, maxBytes: 1 << 20)
                let range = reference.retained(probe)
                let answerable = since == current || (range.map { since + 1 >= $0.lowerBound } ?? false)
                switch answer {
                case .resyncRequired:
                    #expect(!answerable, "since \(since), retained \(String(describing: range)), at \(current)")
                case .changes(let changes, let complete):
                    #expect(answerable)
                    let upper = min(current, since + 4)
                    let expected: [Revision] = since < upper ? Array((since + 1)...upper) : []
                    #expect(changes.map(\.revision) == expected)
                    #expect(changes.allSatisfy { published[probe]?[$0.revision]?.frame == $0.frame })
                    #expect(complete == ((changes.last?.revision ?? since) == current))
                }
            }
            // A client ahead of the list (the server lost changes) must resync.
            if case .changes = feed.changes(of: probe, after: current + 1, current: current, limit: 10, maxBytes: 1 << 20) {
                Issue.record("a revision above the current one was answered")
            }
        }
    }

    /// Long runs of one list's changes (the feed remembers where the list
    /// appended to last is), lists deleted and new ones started in
    /// between, and enough changes that the publish-order queue is
    /// compacted several times: what is retained stays the reference's.
    @Test(arguments: [(4, 3_000), (50, 20_000)])
    func longRunsOfOneListMatchTheReference(retainPerList: Int, maxBytes: Int) {
        var rng = SplitMix64(seed: UInt64(retainPerList * 104_729 + maxBytes))
        var feed = ChangeFeed(ChangeFeed.Configuration(retainPerList: retainPerList, maxBytes: maxBytes))
        var reference = Reference(retainPerList: retainPerList, maxBytes: maxBytes)
        var revisions: [ListID: Revision] = [:]
        var slots = (1...3).map { ListID(UInt64($0)) }
        var nextID: UInt64 = 4
        var appended = 0
        while appended < 5_000 {
            let slot = Int(rng.next() % 3)
            let list = slots[slot]
            for _ in 0..<(1 + Int(rng.next() % 30)) {
                let revision = (revisions[list] ?? 0) + 1
                revisions[list] = revision
                let change = Self.change(list, revision, textBytes: Int(rng.next() % 60))
                feed.append(change)
                reference.append(change)
                appended += 1
            }
            if rng.next() % 8 == 0, let current = revisions[list] {
                let deletion = EncodedChange(Change(namespace: .default, list: list, revision: current + 1, kind: .listDeleted),
                                             maxFrameBytes: 1 << 20)
                feed.append(deletion)
                reference.append(deletion)
                revisions[list] = nil
                slots[slot] = ListID(nextID)
                nextID += 1
            }
            for id in (1..<nextID).map({ ListID($0) }) {
                #expect(feed.retained(id) == reference.retained(id), "list \(id) after \(appended) changes")
            }
            #expect(feed.retainedBytes == reference.entries.reduce(0) { $0 + $1.bytes })
            #expect(feed.retainedCount == reference.entries.count)
        }
    }

    /// One list's many changes leave the publish-order queue full of
    /// entries its own bound dropped, and the queue is compacted; then
    /// other lists push the whole feed past its byte bound: the first
    /// list's changes that were live at the compaction still go first.
    @Test func compactingThePublishOrderKeepsTheLiveChanges() {
        for firstListChanges in 1_028...1_040 {
            var feed = ChangeFeed(ChangeFeed.Configuration(retainPerList: 4, maxBytes: 4_000))
            var reference = Reference(retainPerList: 4, maxBytes: 4_000)
            func append(_ change: EncodedChange) {
                feed.append(change)
                reference.append(change)
            }
            for revision in 1...Revision(firstListChanges) { append(Self.change(ListID(1), revision, textBytes: 10)) }
            for list in 2...12 {
                for revision in 1...Revision(4) { append(Self.change(ListID(UInt64(list)), revision, textBytes: 200)) }
                for id in (1...12).map({ ListID(UInt64($0)) }) {
                    #expect(feed.retained(id) == reference.retained(id), "list \(id), after \(firstListChanges) of list 1")
                }
            }
            #expect(feed.retainedBytes == reference.entries.reduce(0) { $0 + $1.bytes })
        }
    }

    /// A page holds at least one change, then as many as `maxBytes` allows.
    @Test func pagesStopAtTheByteBudget() {
        var feed = ChangeFeed(ChangeFeed.Configuration(retainPerList: 100, maxBytes: 1 << 20))
        for revision in 1...10 { feed.append(Self.change(ListID(1), Revision(revision), textBytes: 1000)) }
        guard case .changes(let one, false) = feed.changes(of: ListID(1), after: 0, current: 10, limit: 100, maxBytes: 10) else {
            Issue.record("expected one change")
            return
        }
        #expect(one.map(\.revision) == [1])
        guard case .changes(let some, false) = feed.changes(of: ListID(1), after: 2, current: 10, limit: 100, maxBytes: 3100) else {
            Issue.record("expected a partial page")
            return
        }
        #expect(some.map(\.revision) == [3, 4, 5])
        guard case .changes(let rest, true) = feed.changes(of: ListID(1), after: 5, current: 10, limit: 100, maxBytes: 1 << 20) else {
            Issue.record("expected the rest")
            return
        }
        #expect(rest.map(\.revision) == [6, 7, 8, 9, 10])
    }

    /// An import that replaced a list starts its history over, even at
    /// the revision right after the retained ones (Protocol/SPEC.md section
    /// 6.13): from before its predecessor it is RESYNC_REQUIRED, not the
    /// old history followed by the import's OMITTED.
    @Test func anImportStartsTheHistoryOver() throws {
        var feed = ChangeFeed(ChangeFeed.Configuration(retainPerList: 100, maxBytes: 1 << 20))
        let list = ListID(4)
        feed.append(EncodedChange(Change(namespace: .default, list: list, revision: 1, kind: .listCreated(name: "L", icon: "")),
                                  maxFrameBytes: 1 << 20))
        feed.append(Self.change(list, 2, textBytes: 10))
        let imported = Change(namespace: .default, list: list, revision: 3,
                              kind: .listImported(ImportedList(name: "L", icon: "", nextItemID: ItemID(1), items: ImportedItems([]))))
        feed.append(EncodedChange(imported, maxFrameBytes: 1 << 20))
        feed.append(Self.change(list, 4, textBytes: 10))
        #expect(feed.retained(list) == 3...4)
        for since: Revision in [0, 1] {
            guard case .resyncRequired = feed.changes(of: list, after: since, current: 4, limit: 10, maxBytes: 1 << 20) else {
                Issue.record("from \(since): expected RESYNC_REQUIRED")
                continue
            }
        }
        guard case .changes(let changes, complete: true) = feed.changes(of: list, after: 2, current: 4, limit: 10, maxBytes: 1 << 20) else {
            Issue.record("from 2: expected the import and the change after it")
            return
        }
        #expect(changes.map(\.revision) == [3, 4])
        let first = try changes[0].frame.withUnsafeBytes { raw in
            try ServerMessage.decode(header: FrameHeader(type: .changePush, requestID: 0),
                                     body: UnsafeRawBufferPointer(rebasing: raw[FrameHeader.size...]), maxFrameBytes: 1 << 20)
        }
        #expect(first == .changePush(ChangePush(ListChange(list: list, revision: 3, kind: .omitted))))
    }

    /// A change too large for one frame travels as OMITTED.
    @Test func oversizedChangesAreOmitted() throws {
        let op = AppliedOperation.setText(ItemID(1), String(repeating: "y", count: 5000))
        let change = Change(namespace: .default, list: ListID(3), revision: 4, kind: .patched([op]))
        let small = EncodedChange(change, maxFrameBytes: 4096)
        let body = try small.frame.withUnsafeBytes { raw in
            try ServerMessage.decode(header: FrameHeader(type: .changePush, requestID: 0),
                                     body: UnsafeRawBufferPointer(rebasing: raw[FrameHeader.size...]), maxFrameBytes: 4096)
        }
        #expect(body == .changePush(ChangePush(ListChange(list: ListID(3), revision: 4, kind: .omitted))))
        #expect(EncodedChange(change, maxFrameBytes: 1 << 20).frame.count > 5000)
    }

    /// A bulk change is held deflated, counted at its frame's size, and
    /// given back byte for byte; a small one is held as it is.
    @Test func bulkChangesAreHeldDeflated() {
        var feed = ChangeFeed(ChangeFeed.Configuration(retainPerList: 10, maxBytes: 1 << 20))
        let ops = (1...1000).map { AppliedOperation.setText(ItemID(UInt64($0)), "item \($0) ........................................") }
        let bulk = EncodedChange(Change(namespace: .default, list: ListID(1), revision: 1, kind: .patched(ops)), maxFrameBytes: 1 << 22)
        let small = Self.change(ListID(1), 2, textBytes: 10)
        feed.append(bulk)
        feed.append(small)
        #expect(feed.retainedBytes == bulk.frame.count + small.frame.count)
        #expect(feed.storedBytes < feed.retainedBytes / 4)
        #expect(RetainedChange(small).storedCount == small.frame.count)
        guard case .changes(let changes, true) = feed.changes(of: ListID(1), after: 0, current: 2, limit: 10, maxBytes: 1 << 22) else {
            Issue.record("expected both changes")
            return
        }
        #expect(changes.map(\.frame) == [bulk.frame, small.frame])
        #expect(changes.map(\.revision) == [1, 2])
    }

    /// A small patch is kept as its operations and encoded when read: the
    /// frame is the one encoding it at its publish makes (client keys left
    /// out, `omitted` past the frame limit), counted at that size; any
    /// other change is kept as its frame, deflated when large.
    @Test(arguments: [UInt32(1 << 20), 64])
    func smallPatchesAreEncodedWhenRead(maxFrameBytes: UInt32) {
        var feed = ChangeFeed(ChangeFeed.Configuration(retainPerList: 10, maxBytes: 1 << 20))
        let list = ListID(7)
        let keyed = ItemFields(text: "eggs", clientKey: "k-1")
        let changes = [
            Change(namespace: .default, list: list, revision: 1, kind: .listCreated(name: "Groceries", icon: "cart")),
            Change(namespace: .default, list: list, revision: 2, kind: .patched([.setText(ItemID(1), "milk")])),
            Change(namespace: .default, list: list, revision: 3, kind: .patched([.insert(id: ItemID(2), index: 1, fields: keyed)])),
            Change(namespace: .default, list: list, revision: 4, kind: .patched([.setText(ItemID(1), String(repeating: "m", count: 100))])),
            Change(namespace: .default, list: list, revision: 5, kind: .listUpdated(name: "Food", icon: "")),
            Change(namespace: .default, list: list, revision: 6,
                   kind: .patched((1...20).map { .setText(ItemID(UInt64($0)), "item \($0) of a bulk patch") })),
        ]
        let frames = changes.map { EncodedChange($0, maxFrameBytes: maxFrameBytes).frame }
        for change in changes {
            let bodyBytes = PublishedChange.bodyBytes(of: change, maxFrameBytes: maxFrameBytes)
            #expect(FrameHeader.size + bodyBytes == EncodedChange(change, maxFrameBytes: maxFrameBytes).frame.count)
            feed.append(list: list, namespace: change.namespace, revision: change.revision, isDeletion: false,
                        startsHistory: false,
                        retaining: RetainedChange(change, frameCount: FrameHeader.size + bodyBytes, maxFrameBytes: maxFrameBytes))
        }
        #expect(frames.prefix(5).allSatisfy { $0.count < RetainedChange.compressionThreshold })
        #expect((frames[5].count >= RetainedChange.compressionThreshold) == (maxFrameBytes > 64))
        #expect(feed.retainedBytes == frames.reduce(0) { $0 + $1.count })
        guard case .changes(let read, true) = feed.changes(of: list, after: 0, current: 6, limit: 10, maxBytes: 1 << 20) else {
            Issue.record("expected every change")
            return
        }
        #expect(read.map(\.frame) == frames)
        #expect(read.map(\.revision) == [1, 2, 3, 4, 5, 6])
        #expect(read.allSatisfy { $0.list == list && $0.namespace == .default })
    }
}
