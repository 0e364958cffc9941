import ChecklistModel
import Testing
@testable import ChecklistStore

/// The store is shared by many threads: requests are atomic and each list's
/// changes reach `onCommit` in revision order.
@Suite(.timeLimit(.minutes(10))) struct StoreConcurrencyTests {
    @Test("concurrent writers and readers")
    func concurrentRequests() async throws {
        let recorder = ChangeRecorder()
        let store = Store(onCommit: recorder.record)
        let shared = try store.createList(in: .default, name: "Shared", icon: "")
        let writers = 4
        let rounds = 200

        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<writers {
                group.addTask {
                    let own = try store.createList(in: .default, name: "Own \(w)", icon: "")
                    for r in 0..<rounds {
                        _ = try store.patch(in: .default, list: own.id, baseRevision: nil, ops: [
                            .insert(tempRef: 1, position: .index(0), fields: ItemFields(text: "\(w)-\(r)")),
                            .toggle(.temp(1)),
                        ])
                        _ = try store.patch(in: .default, list: shared.id, baseRevision: nil, ops: [
                            .insert(tempRef: nil, position: .end, fields: ItemFields(text: "\(w)-\(r)", checked: r % 2 == 0)),
                        ])
                    }
                }
            }
            group.addTask {
                for _ in 0..<rounds {
                    let page = try store.page(in: .default, list: shared.id, start: .offset(0), limit: 100, filter: .checked)
                    // A page is a consistent cut: counts and rows agree.
                    #expect(page.total == page.summary.itemCount - page.summary.uncheckedCount)
                    #expect(page.items.allSatisfy { $0.checked })
                }
            }
            try await group.waitForAll()
        }

        let summary = try store.summary(in: .default, list: shared.id)
        #expect(summary.itemCount == UInt64(writers * rounds) && summary.revision == UInt64(1 + writers * rounds))
        var lastRevision: [ListID: Revision] = [:]
        for change in recorder.changes {
            #expect(change.revision == (lastRevision[change.list] ?? 0) + 1)
            lastRevision[change.list] = change.revision
        }
        #expect(recorder.changes.count == 1 + writers * (1 + 2 * rounds))
    }
}
