import ChecklistModel
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import ChecklistStore

/// Reads share the store's lock: they never wait for one another, and a
/// page read beside commits is still one consistent revision.
@Suite(.timeLimit(.minutes(10))) struct StoreReadSharingTests {
    /// While one reader is inside the lock (and stays there until the other
    /// is done), pages of the same list and of another list, a summary and
    /// the list of lists are still answered. With one exclusive lock the
    /// second reader could not get in: the wait below would run out.
    @Test func readersDoNotWaitForEachOther() throws {
        let store = Store()
        let first = try store.createList(in: .default, name: "First", icon: "")
        let second = try store.createList(in: .default, name: "Second", icon: "")
        _ = try store.patch(in: .default, list: first.id, baseRevision: nil,
                            ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "a"))])
        let inside = DispatchSemaphore(value: 0)
        let othersDone = DispatchSemaphore(value: 0)
        let otherReads = Thread {
            inside.wait()
            let same = try? store.page(in: .default, list: first.id, start: .offset(0), limit: 10, filter: .all)
            let other = try? store.page(in: .default, list: second.id, start: .offset(0), limit: 10, filter: .all)
            let summary = try? store.summary(in: .default, list: first.id)
            let lists = store.lists(in: .default)
            if same?.items.map(\.fields.text) == ["a"], other?.items.isEmpty == true, summary?.itemCount == 1, lists.count == 2 {
                othersDone.signal()
            }
        }
        otherReads.start()
        let answered = store.reading { _ in
            inside.signal()
            return othersDone.wait(timeout: .now() + 60) == .success
        }
        #expect(answered, "a second reader waited for the first")
    }

    /// Readers on threads of their own (not the cooperative pool) page
    /// through lists while a writer appends: every page is one revision's
    /// cut (total, revision and rows agree) and revisions never go back.
    @Test func pagesBesideCommitsAreConsistentCuts() throws {
        let store = Store()
        let lists = try (0..<2).map { try store.createList(in: .default, name: "L\($0)", icon: "").id }
        let appends = 400
        let readers = 4
        let failures = FailureCount()
        let group = DispatchGroup()
        for r in 0..<readers {
            group.enter()
            Thread {
                defer { group.leave() }
                var lastRevision: Revision = 0
                let list = lists[r % lists.count]
                for _ in 0..<appends {
                    guard let page = try? store.page(in: .default, list: list, start: .offset(0), limit: 50, filter: .all) else {
                        failures.add()
                        continue
                    }
                    // Revision 1 + n holds the n items "0" ... "n-1", ids 1 ... n.
                    let n = Int(page.summary.revision) - 1
                    let expected = (0..<min(n, 50)).map { String($0) }
                    let expectedIDs = expected.indices.map { UInt64($0 + 1) }
                    let texts = page.items.map(\.fields.text)
                    let ids = page.items.map(\.id.rawValue)
                    if page.total != UInt64(n) || texts != expected || ids != expectedIDs || page.summary.revision < lastRevision {
                        failures.add()
                    }
                    lastRevision = page.summary.revision
                }
            }.start()
        }
        for i in 0..<appends {
            for list in lists {
                _ = try store.patch(in: .default, list: list, baseRevision: nil,
                                    ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: String(i)))])
            }
        }
        group.wait()
        #expect(failures.value == 0)
        #expect(try store.summary(in: .default, list: lists[0]).itemCount == UInt64(appends))
    }
}

/// A counter the reader threads share.
private final class FailureCount: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
