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
}
