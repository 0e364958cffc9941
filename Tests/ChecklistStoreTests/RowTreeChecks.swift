import ChecklistModel
import Testing
@testable import ChecklistStore

/// Compares a `RowTree` with a plain array of items in every observable way:
/// counts, every row in order, filtered paging for all filters, positions.
func expectTree(_ tree: RowTree, matches reference: [Item], pageSizes: [Int] = [1, 3, 7],
                sourceLocation: SourceLocation = #_sourceLocation) {
    if let problem = tree.invariantViolation() {
        Issue.record("invariant: \(problem)", sourceLocation: sourceLocation)
        return
    }
    #expect(tree.count == reference.count, sourceLocation: sourceLocation)
    #expect(tree.checkedCount == reference.filter(\.checked).count, sourceLocation: sourceLocation)
    let items = tree.items()
    guard items == reference else {
        Issue.record("rows differ: got \(items.map(\.id.rawValue)), expected \(reference.map(\.id.rawValue))",
                     sourceLocation: sourceLocation)
        return
    }
    for filter in RowFilter.allCases {
        let matching = reference.filter { filter.matches(checked: $0.checked) }
        #expect(tree.count(filter) == matching.count, sourceLocation: sourceLocation)
        for pageSize in pageSizes {
            var visited: [Item] = []
            var offset = 0
            while offset <= matching.count {
                var page: [Item] = []
                tree.forEachRow(filter: filter, from: offset, limit: pageSize) { page.append($0.item) }
                let expected = Array(matching[Swift.min(offset, matching.count)..<Swift.min(offset + pageSize, matching.count)])
                if page != expected {
                    Issue.record("filter \(filter) offset \(offset) limit \(pageSize): got \(page.map(\.id.rawValue)), expected \(expected.map(\.id.rawValue))",
                                 sourceLocation: sourceLocation)
                    return
                }
                visited += page
                offset += pageSize
            }
            #expect(visited == matching, sourceLocation: sourceLocation)
        }
    }
    var checkedBefore = 0
    for (index, item) in reference.enumerated() {
        let expected = RowTree.Position(index: index, checkedBefore: checkedBefore, checked: item.checked)
        let position = tree.position(of: item.id)
        if position != expected {
            Issue.record("position of \(item.id): \(String(describing: position)), expected \(expected)", sourceLocation: sourceLocation)
            return
        }
        if tree.isChecked(item.id) != item.checked {
            Issue.record("isChecked of \(item.id): \(String(describing: tree.isChecked(item.id))), expected \(item.checked)",
                         sourceLocation: sourceLocation)
            return
        }
        if item.checked { checkedBefore += 1 }
    }
}
