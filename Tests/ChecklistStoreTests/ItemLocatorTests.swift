import ChecklistRandom
@testable import ChecklistStore
import Testing

/// The id → leaf map against a Dictionary, for dense, sparse and mixed ids,
/// crossing the dense/sparse page thresholds both ways.
@Suite(.timeLimit(.minutes(10))) struct ItemLocatorTests {
    static let cases: [(seed: UInt64, idRange: ClosedRange<UInt64>)] = [
        (1, 1...600),                         // dense pages
        (2, 1...100_000),                     // sparse pages
        (3, UInt64.max - 2000...UInt64.max),  // the top of the id space
    ]

    @Test("random sets and removes", arguments: cases)
    func randomOperations(_ config: (seed: UInt64, idRange: ClosedRange<UInt64>)) {
        var rng = SplitMix64(seed: config.seed)
        var locator = ItemLocator()
        var reference: [UInt64: Int] = [:]
        for step in 0..<20_000 {
            let id = UInt64.random(in: config.idRange, using: &rng)
            if rng.chance(step % 4000 < 2000 ? 70 : 30) {
                let leaf = Int.random(in: 0..<1000, using: &rng)
                locator.set(id, leaf: leaf)
                reference[id] = leaf
            } else {
                locator.remove(id)
                reference[id] = nil
            }
            #expect(locator.leaf(of: id) == reference[id])
            if step % 500 == 0 {
                #expect(locator.count == reference.count)
                let entries = locator.allEntries()
                #expect(entries.count == reference.count)
                #expect(entries.allSatisfy { reference[$0.id] == $0.leaf })
            }
        }
        for (id, leaf) in reference { #expect(locator.leaf(of: id) == leaf) }
    }

    @Test("a page turns dense, then sparse again, then disappears")
    func thresholds() {
        var locator = ItemLocator()
        for id in UInt64(0)..<256 { locator.set(id, leaf: Int(id)) }
        #expect(locator.payloadBytes >= 1024)
        for id in UInt64(0)..<256 { #expect(locator.leaf(of: id) == Int(id)) }
        for id in UInt64(0)..<250 { locator.remove(id) }
        #expect(locator.payloadBytes < 1024)
        for id in UInt64(250)..<256 { #expect(locator.leaf(of: id) == Int(id)) }
        for id in UInt64(250)..<256 { locator.remove(id) }
        #expect(locator.count == 0 && locator.payloadBytes == 0)
    }

    /// The page last changed is remembered by its place in the dictionary:
    /// runs of inserts in one page, pages added and removed around it, and
    /// copies changed apart (each has its own dictionary after the first
    /// change) all keep every answer right.
    @Test("runs in one page, pages added and removed, copies changed apart")
    func rememberedPage() {
        var locator = ItemLocator()
        var reference: [UInt64: Int] = [:]
        func check(_ l: ItemLocator, _ r: [UInt64: Int]) {
            #expect(l.count == r.count)
            for (id, leaf) in r { #expect(l.leaf(of: id) == leaf) }
            #expect(l.allEntries().allSatisfy { r[$0.id] == $0.leaf })
        }
        // Appends across many pages (each new page added while another is remembered).
        for id in UInt64(1)...2_000 {
            let added = locator.insertIfAbsent(id, leaf: Int(id / 64))
            #expect(added)
            reference[id] = Int(id / 64)
        }
        let again = locator.insertIfAbsent(1_999, leaf: 7)
        #expect(!again, "an id mapped already")
        check(locator, reference)
        // A copy, then each changed differently in the remembered page and others.
        var copy = locator
        var copyReference = reference
        for id in UInt64(1_990)...2_010 { copy.set(id, leaf: 900); copyReference[id] = 900 }
        for id in UInt64(1_792)..<2_048 { locator.remove(id); reference[id] = nil }  // the last page goes
        let readded = locator.insertIfAbsent(2_000, leaf: 5)
        #expect(readded, "its page added again")
        reference[2_000] = 5
        for id in UInt64(3)...9 { locator.set(id, leaf: 1); reference[id] = 1 }
        check(locator, reference)
        check(copy, copyReference)
    }
}
