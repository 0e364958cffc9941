import ChecklistModel
import Testing
@testable import ChecklistStore

/// Pages by offset and by anchor, under each filter, copied and zero-copy.
@Suite(.timeLimit(.minutes(10))) struct StorePagingTests {
    /// A list of 12 items "0" ... "11"; items 2, 3, 5, 7, 11 are checked.
    static func makeList() throws -> (Store, ListID) {
        let store = Store(limits: Limits(maxPageRows: 5), treeShape: RowTreeShape(leafCapacity: 4, innerCapacity: 4), onCommit: { _ in })
        let list = try store.createList(in: .default, name: "Numbers", icon: "")
        let checked: Set = [2, 3, 5, 7, 11]
        _ = try store.patch(in: .default, list: list.id, baseRevision: nil, ops: (0..<12).map {
            .insert(tempRef: nil, position: .end, fields: ItemFields(text: "\($0)", checked: checked.contains($0)))
        })
        return (store, list.id)
    }

    static func texts(_ page: StorePage) -> [String] { page.items.map(\.text) }

    @Test("offsets under each filter")
    func offsets() throws {
        let (store, list) = try Self.makeList()
        let all = try store.page(in: .default, list: list, start: .offset(10), limit: 5, filter: .all)
        #expect(all.total == 12 && all.offset == 10 && Self.texts(all) == ["10", "11"])
        let checked = try store.page(in: .default, list: list, start: .offset(1), limit: 3, filter: .checked)
        #expect(checked.total == 5 && checked.offset == 1 && Self.texts(checked) == ["3", "5", "7"])
        let unchecked = try store.page(in: .default, list: list, start: .offset(0), limit: 5, filter: .unchecked)
        #expect(unchecked.total == 7 && Self.texts(unchecked) == ["0", "1", "4", "6", "8"])
        #expect(unchecked.summary.itemCount == 12 && unchecked.summary.uncheckedCount == 7 && unchecked.summary.revision == 2)
    }

    @Test("an offset past the end is an empty page with the right total")
    func pastTheEnd() throws {
        let (store, list) = try Self.makeList()
        for offset: UInt64 in [5, 6, 1000, UInt64.max] {
            let page = try store.page(in: .default, list: list, start: .offset(offset), limit: 5, filter: .checked)
            #expect(page.items.isEmpty && page.total == 5 && page.offset == offset)
        }
    }

    @Test("anchors start at the item, or where it would be under the filter")
    func anchors() throws {
        let (store, list) = try Self.makeList()
        // Item ids are 1 + the number in the text.
        let atSeven = try store.page(in: .default, list: list, start: .anchor(ItemID(8)), limit: 3, filter: .all)
        #expect(atSeven.offset == 7 && Self.texts(atSeven) == ["7", "8", "9"])
        let checkedFromSeven = try store.page(in: .default, list: list, start: .anchor(ItemID(8)), limit: 3, filter: .checked)
        #expect(checkedFromSeven.offset == 3 && Self.texts(checkedFromSeven) == ["7", "11"])
        // "4" is unchecked: a checked page anchored there starts at the next checked row, "5".
        let checkedFromFour = try store.page(in: .default, list: list, start: .anchor(ItemID(5)), limit: 2, filter: .checked)
        #expect(checkedFromFour.offset == 2 && Self.texts(checkedFromFour) == ["5", "7"])
        // "11" is checked and last: an unchecked page anchored there is empty, at the end.
        let uncheckedFromEleven = try store.page(in: .default, list: list, start: .anchor(ItemID(12)), limit: 2, filter: .unchecked)
        #expect(uncheckedFromEleven.offset == 7 && uncheckedFromEleven.items.isEmpty && uncheckedFromEleven.total == 7)
        // Anchors follow their item when it moves.
        _ = try store.patch(in: .default, list: list, baseRevision: nil, ops: [.move(.id(ItemID(8)), toIndex: 0)])
        let moved = try store.page(in: .default, list: list, start: .anchor(ItemID(8)), limit: 2, filter: .all)
        #expect(moved.offset == 0 && Self.texts(moved) == ["7", "0"])
    }

    @Test("bad limits and missing anchors")
    func errors() throws {
        let (store, list) = try Self.makeList()
        StoreTests.expectError(.badField, field: "limit") {
            _ = try store.page(in: .default, list: list, start: .offset(0), limit: 0, filter: .all)
        }
        StoreTests.expectError(.badField, field: "limit") {
            _ = try store.page(in: .default, list: list, start: .offset(0), limit: -3, filter: .all)
        }
        StoreTests.expectError(.limitExceeded, field: "limit") {
            _ = try store.page(in: .default, list: list, start: .offset(0), limit: 6, filter: .all)
        }
        _ = try store.patch(in: .default, list: list, baseRevision: nil, ops: [.delete(.id(ItemID(3)))])
        StoreTests.expectError(.notFound, message: "item 3 not found") {
            _ = try store.page(in: .default, list: list, start: .anchor(ItemID(3)), limit: 1, filter: .all)
        }
    }

    @Test("pageRows lends the same rows as page, text bytes included")
    func zeroCopy() throws {
        let (store, list) = try Self.makeList()
        _ = try store.patch(in: .default, list: list, baseRevision: nil, ops: [
            .setText(.id(ItemID(3)), "Grüße 🍎"), .setDue(.id(ItemID(3)), 86_400), .setPrice(.id(ItemID(4)), 250),
        ])
        for filter in RowFilter.allCases {
            for start: PageStart in [.offset(0), .offset(2), .anchor(ItemID(4)), .offset(40)] {
                let page = try store.page(in: .default, list: list, start: start, limit: 4, filter: filter)
                let rows = try store.pageRows(in: .default, list: list, start: start, limit: 4, filter: filter)
                var items: [Item] = []
                var bytes: [[UInt8]] = []
                rows.forEach { row in
                    items.append(row.item)
                    bytes.append(row.withTextBytes { Array($0) })
                }
                #expect(rows.header == PageHeader(list: page.summary.id, revision: page.summary.revision, total: page.total,
                                                  offset: page.offset, count: page.items.count))
                #expect(rows.summary == page.summary)
                #expect(items == page.items)
                #expect(bytes == page.items.map { Array($0.text.utf8) })
            }
        }
        // The errors are those of page.
        StoreTests.expectError(.notFound, message: "item 99 not found") {
            _ = try store.pageRows(in: .default, list: list, start: .anchor(ItemID(99)), limit: 1, filter: .all)
        }
        StoreTests.expectError(.limitExceeded, field: "limit") {
            _ = try store.pageRows(in: .default, list: list, start: .offset(0), limit: 6, filter: .all)
        }
    }

    @Test("rows taken by pageRows stay as they were while the list changes")
    func pageRowsAreASnapshot() throws {
        let (store, list) = try Self.makeList()
        for filter in RowFilter.allCases {
            let before = try store.page(in: .default, list: list, start: .offset(1), limit: 5, filter: filter)
            let rows = try store.pageRows(in: .default, list: list, start: .offset(1), limit: 5, filter: filter)
            // Edit, insert and delete in the very leaves the rows are in (4-row leaves).
            let ids = before.items.map(\.id)
            _ = try store.patch(in: .default, list: list, baseRevision: nil, ops: ids.map { .setText(.id($0), "changed") }
                                + [.setChecked(.id(ids[0]), true), .delete(.id(ids[1])),
                                   .insert(tempRef: nil, position: .index(0), fields: ItemFields(text: "new"))])
            var items: [Item] = []
            rows.forEach { items.append($0.item) }
            #expect(items == before.items)
            #expect(rows.header.revision == before.summary.revision)
            let after = try store.page(in: .default, list: list, start: .offset(1), limit: 5, filter: filter)
            #expect(after.items != before.items)
        }
    }
}
