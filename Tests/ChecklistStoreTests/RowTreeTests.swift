import ChecklistModel
import ChecklistRandom
@testable import ChecklistStore
import Testing

/// The RowTree against a plain `[Item]`: every small size and position, then
/// long random operation sequences on trees several levels deep. Small
/// capacities (4 rows per leaf, 4 children per node) make 40 rows three
/// levels deep.
@Suite(.timeLimit(.minutes(10))) struct RowTreeTests {
    /// How a tree of `size` rows is built; the same rows end in different
    /// shapes (appending fills leaves, inserting at the front splits evenly,
    /// `RowTreeBuilder` fills leaves and makes the inner levels at the end).
    enum Build: CaseIterable {
        case appending, prepending, shuffled, bulk
    }

    static let maxSmallSize = 40

    /// Builds a tree and its reference with ids 1...size.
    static func make(size: Int, build: Build, leaf: Int = 4, inner: Int = 4, seed: UInt64 = 1) -> (RowTree, [Item]) {
        var rng = SplitMix64(seed: seed &+ UInt64(size))
        let items = (0..<size).map { Item(id: ItemID(UInt64($0 + 1)), fields: Samples.fields(&rng)) }
        var tree = RowTree(leafCapacity: leaf, innerCapacity: inner)
        switch build {
        case .appending:
            for item in items { tree.append(item) }
        case .prepending:
            for item in items.reversed() { tree.insert(item, at: 0) }
        case .bulk:
            guard let built = RowTreeBuilder.build(items, shape: RowTreeShape(leafCapacity: leaf, innerCapacity: inner)) else {
                preconditionFailure("distinct ids refused")
            }
            tree = built
        case .shuffled:
            // Insert in random order at the index that yields the final order.
            var placed: [Item] = []
            for item in items.shuffled(using: &rng) {
                let index = placed.firstIndex { $0.id > item.id } ?? placed.count
                placed.insert(item, at: index)
                tree.insert(item, at: index)
            }
        }
        return (tree, items)
    }

    @Test("empty tree")
    func empty() {
        let tree = RowTree(leafCapacity: 4, innerCapacity: 4)
        expectTree(tree, matches: [])
        #expect(tree.position(of: ItemID(1)) == nil && tree.isChecked(ItemID(1)) == nil)
        var visited = 0
        tree.forEachRow(filter: .all, from: 0, limit: 10) { _ in visited += 1 }
        #expect(visited == 0)
    }

    @Test("building every small size in every way", arguments: Build.allCases)
    func build(_ build: Build) {
        for size in 0...Self.maxSmallSize {
            let (tree, reference) = Self.make(size: size, build: build)
            expectTree(tree, matches: reference)
        }
    }

    @Test("insert at every position of every small size", arguments: Build.allCases)
    func insertEverywhere(_ build: Build) {
        var rng = SplitMix64(seed: 7)
        for size in 0...Self.maxSmallSize {
            for index in 0...size {
                var (tree, reference) = Self.make(size: size, build: build)
                let item = Item(id: ItemID(1000), fields: Samples.fields(&rng))
                tree.insert(item, at: index)
                reference.insert(item, at: index)
                expectTree(tree, matches: reference, pageSizes: [3])
            }
        }
    }

    @Test("remove at every position of every small size", arguments: Build.allCases)
    func removeEverywhere(_ build: Build) {
        for size in 1...Self.maxSmallSize {
            for index in 0..<size {
                var (tree, reference) = Self.make(size: size, build: build)
                let removed = tree.remove(at: index)
                #expect(removed == reference.remove(at: index))
                expectTree(tree, matches: reference, pageSizes: [3])
            }
        }
    }

    @Test("remove by id everywhere, down to empty")
    func removeByID() {
        for size in 1...Self.maxSmallSize {
            var (tree, reference) = Self.make(size: size, build: .shuffled)
            var rng = SplitMix64(seed: UInt64(size))
            while let victim = reference.randomElement(using: &rng) {
                let index = reference.firstIndex(of: victim)!
                let result = tree.remove(victim.id)
                #expect(result?.item == victim)
                #expect(result?.index == index)
                reference.remove(at: index)
                expectTree(tree, matches: reference, pageSizes: [2])
            }
            #expect(tree.height == 0)
            #expect(tree.remove(ItemID(1)) == nil)
        }
    }

    @Test("move from every position to every position", arguments: [Build.appending, .prepending])
    func moveEverywhere(_ build: Build) {
        for size in 1...24 {
            for from in 0..<size {
                for to in 0..<size {
                    var (tree, reference) = Self.make(size: size, build: build)
                    tree.move(from: from, to: to)
                    reference.insert(reference.remove(at: from), at: to)
                    expectTree(tree, matches: reference, pageSizes: [5])
                }
            }
        }
    }

    @Test("changing each field of every row")
    func fieldChanges() {
        let size = Self.maxSmallSize
        let (start, startReference) = Self.make(size: size, build: .shuffled)
        var rng = SplitMix64(seed: 99)
        for index in 0..<size {
            var tree = start
            var reference = startReference
            let id = reference[index].id
            let other = Samples.fields(&rng)
            let changes: [FieldChange] = [
                .text(other.text + "changed"), .checked(!reference[index].checked), .remind(!reference[index].fields.remind),
                .due(reference[index].fields.due == nil ? 42 : nil), .price(reference[index].fields.price == nil ? -7 : nil),
            ]
            for change in changes {
                let before = reference[index].fields
                let old = tree.apply(change, to: id)
                switch change {
                case .text(let t): #expect(old == .text(before.text)); reference[index].fields.text = t
                case .checked(let c): #expect(old == .checked(before.checked)); reference[index].fields.checked = c
                case .remind(let r): #expect(old == .remind(before.remind)); reference[index].fields.remind = r
                case .due(let d): #expect(old == .due(before.due)); reference[index].fields.due = d
                case .price(let p): #expect(old == .price(before.price)); reference[index].fields.price = p
                }
                expectTree(tree, matches: reference, pageSizes: [4])
            }
        }
        var tree = start
        #expect(tree.apply(.checked(true), to: ItemID(9999)) == nil)
    }

    @Test("appending fills leaves completely")
    func appendFill() {
        var tree = RowTree(leafCapacity: 8, innerCapacity: 4)
        for i in 1...1000 { tree.append(Item(id: ItemID(UInt64(i)), fields: ItemFields(text: "row \(i)"))) }
        #expect(tree.invariantViolation() == nil)
        let used = tree.leaves.indices.filter { !tree.freeLeaves.contains($0) }
        #expect(used.count == 125)
        #expect(used.allSatisfy { tree.leaves[$0].count == 8 })
    }

    /// The append fast paths (`insertionPoint(count)` walking down the last
    /// children, `RowLeaf.insert` appending to the columns) against the
    /// general descent's answer: right after the last row, in every shape,
    /// with texts that are empty, multi-byte and long, also after rows
    /// were removed from the end.
    @Test("appending lands right after the last row, in every shape", arguments: Build.allCases)
    func appendAfterLast(_ build: Build) {
        for size in 0...Self.maxSmallSize {
            var (tree, reference) = Self.make(size: size, build: build)
            var nextID = UInt64(size + 1)
            for (round, text) in ["", "Grüße 🍎", String(repeating: "x", count: 300), "z"].enumerated() {
                if tree.count > 0 {
                    let last = tree.findRow(tree.count - 1, filter: .all)
                    let point = tree.insertionPoint(tree.count)
                    #expect(point.leaf == last.leaf && point.slot == last.slot + 1, "size \(size), round \(round)")
                } else {
                    let point = tree.insertionPoint(0)
                    #expect(point.leaf == tree.root && point.slot == 0, "size \(size), round \(round)")
                }
                let item = Item(id: ItemID(nextID), fields: ItemFields(text: text, checked: nextID % 2 == 0,
                                                                       due: round == 2 ? 7 : nil))
                nextID += 1
                tree.append(item)
                reference.append(item)
                if round == 1 {
                    tree.remove(at: tree.count - 1)
                    reference.removeLast()
                }
            }
            expectTree(tree, matches: reference)
        }
    }

    struct RandomCase: Sendable, CustomTestStringConvertible {
        var seed: UInt64
        var leaf: Int
        var inner: Int
        var ops: Int
        var maxSize: Int
        /// Share of inserts that append at the end (the uneven-split path).
        var appendPercent = 0
        var testDescription: String { "seed \(seed), capacities \(leaf)/\(inner), \(appendPercent)% appends" }
    }

    static let randomCases = [
        RandomCase(seed: 1, leaf: 4, inner: 4, ops: 4000, maxSize: 300),
        RandomCase(seed: 2, leaf: 4, inner: 5, ops: 4000, maxSize: 500),
        RandomCase(seed: 3, leaf: 5, inner: 4, ops: 4000, maxSize: 200, appendPercent: 50),
        RandomCase(seed: 4, leaf: 6, inner: 6, ops: 3000, maxSize: 700, appendPercent: 20),
        RandomCase(seed: 5, leaf: 4, inner: 4, ops: 3000, maxSize: 60),
        RandomCase(seed: 6, leaf: 4, inner: 4, ops: 4000, maxSize: 400, appendPercent: 80),
    ]

    @Test("random operation sequences", arguments: randomCases)
    func randomSequences(_ config: RandomCase) {
        var rng = SplitMix64(seed: config.seed)
        var tree = RowTree(leafCapacity: config.leaf, innerCapacity: config.inner)
        var reference: [Item] = []
        var nextID: UInt64 = 1
        var growing = true
        var maxHeight = 0
        for step in 0..<config.ops {
            // Alternate between growing to maxSize and draining to a few rows,
            // so that splits, merges and root changes all happen repeatedly.
            if reference.count >= config.maxSize { growing = false }
            if reference.count <= 2 { growing = true }
            let roll = Int.random(in: 0..<100, using: &rng)
            if reference.isEmpty || roll < (growing ? 45 : 15) {
                let index = rng.chance(config.appendPercent) ? reference.count : Int.random(in: 0...reference.count, using: &rng)
                let item = Item(id: ItemID(nextID), fields: Samples.fields(&rng))
                nextID += 1
                tree.insert(item, at: index)
                reference.insert(item, at: index)
            } else if roll < 60 {
                if rng.chance(50) {
                    let index = Int.random(in: 0..<reference.count, using: &rng)
                    #expect(tree.remove(at: index) == reference.remove(at: index))
                } else {
                    let index = Int.random(in: 0..<reference.count, using: &rng)
                    let result = tree.remove(reference[index].id)
                    #expect(result?.index == index)
                    reference.remove(at: index)
                }
            } else if roll < 75 {
                let from = Int.random(in: 0..<reference.count, using: &rng)
                let to = Int.random(in: 0..<reference.count, using: &rng)
                tree.move(from: from, to: to)
                reference.insert(reference.remove(at: from), at: to)
            } else {
                let index = Int.random(in: 0..<reference.count, using: &rng)
                let other = Samples.fields(&rng)
                let change: FieldChange
                switch Int.random(in: 0..<5, using: &rng) {
                case 0: change = .text(other.text); reference[index].fields.text = other.text
                case 1: change = .checked(other.checked); reference[index].fields.checked = other.checked
                case 2: change = .remind(other.remind); reference[index].fields.remind = other.remind
                case 3: change = .due(other.due); reference[index].fields.due = other.due
                default: change = .price(other.price); reference[index].fields.price = other.price
                }
                #expect(tree.apply(change, to: reference[index].id) != nil)
            }
            maxHeight = max(maxHeight, tree.height)
            // Full comparison every step while small, every 10th step when large.
            if reference.count < 120 || step % 10 == 0 {
                expectTree(tree, matches: reference, pageSizes: [1, 16])
            } else {
                #expect(tree.count == reference.count && tree.invariantViolation() == nil)
            }
        }
        expectTree(tree, matches: reference)
        #expect(maxHeight >= 3)
    }

    @Test("paging from every offset with every limit")
    func pagingWindows() {
        let (tree, reference) = Self.make(size: 37, build: .shuffled, leaf: 4, inner: 4, seed: 11)
        for filter in RowFilter.allCases {
            let matching = reference.filter { filter.matches(checked: $0.checked) }
            for offset in 0...(matching.count + 2) {
                for limit in 0...(matching.count + 2) {
                    var page: [Item] = []
                    tree.forEachRow(filter: filter, from: offset, limit: limit) { page.append($0.item) }
                    let lower = min(offset, matching.count)
                    let upper = min(offset + limit, matching.count)
                    #expect(page == Array(matching[lower..<upper]))
                }
            }
        }
    }

    @Test("row views expose fields without copying")
    func rowViews() {
        var tree = RowTree()
        let fields = ItemFields(text: "Grüße 🍎", checked: true, due: -5, remind: true, price: 1999)
        tree.append(Item(id: ItemID(3), fields: fields))
        tree.append(Item(id: ItemID(4), fields: ItemFields(text: "")))
        var seen: [(ItemID, Bool, Bool, Int64?, Int64?, [UInt8])] = []
        tree.forEachRow(filter: .all, from: 0, limit: 10) { row in
            seen.append((row.id, row.checked, row.remind, row.due, row.price, row.withTextBytes { Array($0) }))
        }
        #expect(seen.count == 2)
        #expect(seen[0].0 == ItemID(3) && seen[0].1 && seen[0].2 && seen[0].3 == -5 && seen[0].4 == 1999)
        #expect(seen[0].5 == Array("Grüße 🍎".utf8))
        #expect(seen[1].0 == ItemID(4) && !seen[1].1 && !seen[1].2 && seen[1].3 == nil && seen[1].4 == nil && seen[1].5.isEmpty)
    }
}
