import ChecklistModel
import ChecklistRandom
import Testing
@testable import ChecklistStore

/// `RowBatch` (leaves built off the restoring thread) added to a
/// `RowTreeBuilder` or `ListRestorer`: the same rows as appending them one
/// by one, a valid tree whatever the seams between batches, and the same
/// errors for the same first bad row.
@Suite(.timeLimit(.minutes(1))) struct RowBatchTests {
    static func batch(_ items: ArraySlice<Item>, shape: RowTreeShape) -> RowBatch {
        var builder = RowBatchBuilder(shape: shape)
        for item in items {
            let taken = item.withView { builder.append($0) }
            #expect(taken)
        }
        return builder.take()
    }

    /// Rows with ids in runs (`spaced` false) or spelled out.
    /// `items` with bad ids. Each pair of `changes`: row `changes[2k]` gets
    /// the id of row `changes[2k+1]` (or that number itself when it is no
    /// row: 0, 499, 500, ...).
    static func withIDs(_ items: [Item], changedBy changes: [Int]) -> [Item] {
        var items = items
        for k in stride(from: 0, to: changes.count - 1, by: 2) {
            let id = changes[k + 1] < items.count && changes[k + 1] > 0 ? items[changes[k + 1]].id : ItemID(UInt64(changes[k + 1]))
            items[changes[k]].id = id
        }
        return items
    }

    static func rows(_ count: Int, seed: UInt64, spaced: Bool) -> [Item] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { Item(id: ItemID(1 + UInt64($0) * (spaced ? 3 : 1)), fields: Samples.fields(&rng)) }
    }

    @Test("batches of every size, between single rows, build the tree appending builds",
          arguments: [(RowTreeShape(leafCapacity: 8, innerCapacity: 4), false), (RowTreeShape(leafCapacity: 8, innerCapacity: 4), true),
                      (RowTreeShape.standard, false), (RowTreeShape.standard, true)])
    func seams(_ shape: RowTreeShape, _ spaced: Bool) {
        let items = Self.rows(6000, seed: spaced ? 5 : 6, spaced: spaced)
        var rng = SplitMix64(seed: 11)
        var builder = RowTreeBuilder(shape: shape)
        var at = 0
        while at < items.count {
            let size = [0, 1, 2, 3, shape.leafCapacity / 2 - 1, shape.leafCapacity / 2, shape.leafCapacity - 1, shape.leafCapacity,
                        shape.leafCapacity + 1, 3 * shape.leafCapacity + 5, 300].randomElement(using: &rng)!
            let end = min(items.count, at + size)
            if rng.chance(20) {
                for item in items[at..<end] {
                    let appended = builder.append(item)
                    #expect(appended)
                }
            } else {
                let refused = builder.append(Self.batch(items[at..<end], shape: shape))
                #expect(refused == nil)
            }
            at = end
        }
        builder.finish()
        let tree = builder.result
        #expect(tree.invariantViolation() == nil)
        #expect(tree.items() == items)
        #expect(tree.count == items.count)
        #expect(tree.checkedCount == items.filter(\.fields.checked).count)
    }

    @Test("one batch of a whole list files its full leaves without copying rows")
    func wholeLeaves() {
        let items = Self.rows(1000, seed: 2, spaced: false)
        let batch = Self.batch(items[...], shape: .standard)
        var builder = RowTreeBuilder(shape: .standard)
        let refused = builder.append(batch)
        #expect(refused == nil)
        builder.finish()
        #expect(builder.result.items() == items)
        #expect(builder.result.invariantViolation() == nil)
        // The batch's full leaves are the tree's (shared storage, not
        // copies); the last one was topped up.
        #expect(batch.leaves.count == 8)
        for (built, filed) in zip(batch.leaves.dropLast(), builder.result.leaves) {
            built.flags.withUnsafeBufferPointer { a in
                filed.flags.withUnsafeBufferPointer { b in #expect(a.baseAddress == b.baseAddress) }
            }
        }
    }

    /// The error appending `items` to a fresh restorer gives, row by row
    /// or in batches of `size`.
    static func restoreError(_ items: [Item], batches size: Int?) -> String? {
        let store = Store()
        let list = ExportedList(namespace: .default, summary: ListSummary(id: ListID(3), name: "L", icon: "", itemCount: 0,
                                                                          uncheckedCount: 0, revision: 1),
                                nextItemID: ItemID(500))
        do {
            var restorer = try store.makeRestorer(for: list)
            if let size {
                for start in stride(from: 0, to: items.count, by: size) {
                    try restorer.append(batch(items[start..<min(items.count, start + size)], shape: .standard))
                }
            } else {
                for item in items { try restorer.append(item) }
            }
            try store.finishRestore(restorer)
            var restored: [Item] = []
            store.exportLists(in: nil) { _, forEachRow in forEachRow { restored.append($0.item) } }
            #expect(restored == items)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test("a repeated, zero or too high id gives the error of appending row by row",
          arguments: [[7, 200], [150, 3], [40, 0], [250, 500], [10, 499, 300, 10], [130, 131, 129]])
    func badIDs(_ changes: [Int]) {
        let items = Self.withIDs(Self.rows(400, seed: 4, spaced: false), changedBy: changes)
        let serial = Self.restoreError(items, batches: nil)
        #expect(serial != nil)
        for size in [1, 5, 128, 1000] { #expect(Self.restoreError(items, batches: size) == serial, "batches of \(size)") }
    }

    @Test("good rows restore the same in batches as row by row")
    func goodRows() {
        let items = Self.rows(400, seed: 8, spaced: true).filter { $0.id.rawValue < 500 }
        for size in [nil, 1, 64, 129, 1000] { #expect(Self.restoreError(items, batches: size) == nil) }
    }
}
