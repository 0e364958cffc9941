import ChecklistModel
import ChecklistRandom
import Testing
@testable import ChecklistStore

/// `RowTreeBuilder` (restores and imports) against a tree built by appending
/// the same rows one by one: same rows, counts and positions, a valid shape,
/// and leaves without spare capacity.
@Suite(.timeLimit(.minutes(1))) struct RowTreeBuilderTests {
    static func rows(_ count: Int, seed: UInt64, firstID: UInt64 = 1) -> [Item] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { Item(id: ItemID(firstID + UInt64($0) * 3), fields: Samples.fields(&rng)) }
    }

    @Test("bulk build matches appending, for sizes around leaf and level boundaries",
          arguments: [0, 1, 127, 128, 129, 128 * 16, 128 * 16 + 1, 128 * 16 * 16 + 5])
    func matchesAppending(_ size: Int) {
        let items = Self.rows(size, seed: UInt64(size))
        var appended = RowTree()
        for item in items { appended.append(item) }
        guard let built = RowTreeBuilder.build(items, shape: .standard) else {
            Issue.record("distinct ids refused")
            return
        }
        #expect(built.invariantViolation() == nil)
        #expect(built.count == appended.count)
        #expect(built.checkedCount == appended.checkedCount)
        #expect(built.items() == items)
        for item in items.prefix(300) + items.suffix(300) {
            #expect(built.position(of: item.id) == appended.position(of: item.id))
        }
    }

    @Test("a small tree keeps every invariant through edits after a bulk build")
    func editsAfterBuild() {
        var items = Self.rows(500, seed: 9)
        guard var tree = RowTreeBuilder.build(items, shape: RowTreeShape(leafCapacity: 8, innerCapacity: 4)) else {
            Issue.record("distinct ids refused")
            return
        }
        var rng = SplitMix64(seed: 3)
        for step in 0..<400 {
            if step % 3 == 0, !items.isEmpty {
                let index = Int.random(in: 0..<items.count, using: &rng)
                #expect(tree.remove(at: index) == items.remove(at: index))
            } else {
                let index = Int.random(in: 0...items.count, using: &rng)
                let item = Item(id: ItemID(10_000 + UInt64(step)), fields: Samples.fields(&rng))
                tree.insert(item, at: index)
                items.insert(item, at: index)
            }
        }
        expectTree(tree, matches: items)
    }

    @Test("a repeated id is refused and not appended")
    func repeatedID() {
        var builder = RowTreeBuilder(shape: .standard)
        let first = builder.append(Item(id: ItemID(5), fields: ItemFields(text: "a")))
        let again = builder.append(Item(id: ItemID(5), fields: ItemFields(text: "b")))
        #expect(first)
        #expect(!again)
        #expect(builder.count == 1)
        builder.finish()
        #expect(builder.result.items().map(\.fields.text) == ["a"])
    }

    @Test("full leaves hold no spare capacity")
    func exactLeaves() {
        let items = (1...1000).map { Item(id: ItemID(UInt64($0)), fields: ItemFields(text: "row \($0) of a thousand", checked: $0 % 3 == 0)) }
        guard let tree = RowTreeBuilder.build(items, shape: .standard) else {
            Issue.record("distinct ids refused")
            return
        }
        for leaf in tree.leaves {
            #expect(leaf.arena.capacity - leaf.arena.count < 32)  // malloc rounding at most
            #expect(leaf.ids.capacity <= RowTree.defaultLeafCapacity + 2)
        }
    }
}
