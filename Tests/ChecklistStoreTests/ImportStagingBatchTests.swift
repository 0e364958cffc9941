import ChecklistModel
import Testing
@testable import ChecklistStore

/// `ImportStaging.append(_: RowBatch)` (rows built on an IMPORT's inflate
/// workers): the same staged lists as appending the rows one by one, and
/// the same error for the same first bad row (an id of 0, repeated or not
/// below the list's next id, a text over the limit).
@Suite(.timeLimit(.minutes(1))) struct ImportStagingBatchTests {
    static let limits = Limits(maxTextBytes: 200)

    /// The lists `items` stages as, row by row or in batches of `size`, or
    /// the error's description.
    static func stage(_ items: [Item], batches size: Int?) -> Result<[Item], ChecklistError> {
        let store = Store(limits: limits)
        var staging = store.makeImportStaging()
        do throws(ChecklistError) {
            try staging.beginList(ImportStaging.ListHeader(namespace: .default, sourceID: ListID(9), name: "L", icon: "",
                                                           revision: 1, nextItemID: ItemID(500)))
            if let size {
                for start in stride(from: 0, to: items.count, by: size) {
                    try staging.append(RowBatchTests.batch(items[start..<min(items.count, start + size)], shape: .standard))
                }
            } else {
                for item in items { try staging.append(item) }
            }
        } catch {
            return .failure(error)
        }
        #expect(staging.itemCount == items.count)
        let result: ImportResult
        do throws(ChecklistError) { result = try store.importLists(staging, mode: .replace, namespace: .default) } catch { return .failure(error) }
        #expect(result.itemCount == UInt64(items.count))
        var imported: [Item] = []
        store.exportLists(in: nil) { _, forEachRow in forEachRow { imported.append($0.item) } }
        return .success(imported)
    }

    static func same(_ items: [Item], sourceLocation: SourceLocation = #_sourceLocation) -> Result<[Item], ChecklistError> {
        let serial = stage(items, batches: nil)
        for size in [1, 5, 128, 129, 1000] {
            let batched = stage(items, batches: size)
            switch (serial, batched) {
            case (.success(let a), .success(let b)):
                #expect(a == b, "batches of \(size)", sourceLocation: sourceLocation)
            case (.failure(let a), .failure(let b)):
                #expect(a == b, "batches of \(size)", sourceLocation: sourceLocation)
            default:
                Issue.record("batches of \(size): \(batched), row by row: \(serial)", sourceLocation: sourceLocation)
            }
        }
        return serial
    }

    @Test("good rows stage the same in batches as row by row")
    func goodRows() throws {
        let items = RowBatchTests.rows(400, seed: 8, spaced: true).filter { $0.id.rawValue < 500 }
        #expect(try Self.same(items).get() == items)
    }

    @Test("a repeated, zero or too high id gives the error of appending row by row",
          arguments: [[7, 200], [150, 3], [40, 0], [250, 500], [10, 499, 300, 10], [130, 131, 129]])
    func badIDs(_ changes: [Int]) {
        let items = RowBatchTests.withIDs(RowBatchTests.rows(400, seed: 4, spaced: false), changedBy: changes)
        if case .success = Self.same(items) { Issue.record("bad ids were staged") }
    }

    @Test("a text over the limit gives the error of appending row by row, before or after a bad id", arguments: [0, 127, 128, 399])
    func longText(_ row: Int) {
        var items = RowBatchTests.rows(400, seed: 6, spaced: false)
        items[row].fields.text = String(repeating: "é", count: 101)
        guard case .failure(let error) = Self.same(items) else {
            Issue.record("a long text was staged")
            return
        }
        #expect(error.code == .limitExceeded && error.field == "text")
        items[min(row + 3, 399)].id = ItemID(0)
        _ = Self.same(items)
        items[max(row - 3, 0)].id = items[max(row - 4, 0)].id
        _ = Self.same(items)
    }
}
