import ChecklistRandom
import Testing
@testable import ChecklistStore

/// `LeafIDs` against a plain array of the same ids, over random edit
/// sequences that keep, break and restore runs: every read agrees, and ids
/// that go up by one are held as a run.
@Suite(.timeLimit(.minutes(1))) struct LeafIDsTests {
    static func check(_ ids: LeafIDs, _ reference: [UInt64]) {
        #expect(Array(ids) == reference)
        #expect(ids.count == reference.count)
        for (slot, id) in reference.enumerated() { #expect(ids.firstIndex(of: id) == slot) }
        #expect(ids.firstIndex(of: (reference.max() ?? 0) + 1) == nil)
        if reference.isEmpty { #expect(ids.firstIndex(of: 0) == nil) }
    }

    @Test("random edits agree with an array", arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func matchesAnArray(_ seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var ids = LeafIDs()
        var reference: [UInt64] = []
        var next: UInt64 = 10
        for _ in 0..<400 {
            let slot = reference.isEmpty ? 0 : Int(rng.next() % UInt64(reference.count + 1))
            switch rng.next() % 8 {
            case 0, 1, 2:
                // Appending the next id keeps a run.
                next += 1
                ids.append(next)
                reference.append(next)
            case 3:
                next += 1
                ids.insert(next, at: slot)
                reference.insert(next, at: slot)
            case 4 where !reference.isEmpty:
                let at = min(slot, reference.count - 1)
                #expect(ids.remove(at: at) == reference.remove(at: at))
            case 5 where !reference.isEmpty:
                let lower = min(slot, reference.count - 1)
                let upper = lower + Int(rng.next() % UInt64(reference.count - lower + 1))
                let part = ids.extracting(lower..<upper)
                #expect(Array(part) == Array(reference[lower..<upper]))
                ids.removeSubrange(lower..<upper)
                reference.removeSubrange(lower..<upper)
                // Put it back at either end or in the middle.
                let at = reference.isEmpty ? 0 : Int(rng.next() % UInt64(reference.count + 1))
                ids.insert(contentsOf: part, at: at)
                reference.insert(contentsOf: Array(part), at: at)
            case 6:
                ids.trimCapacity()
            default:
                if reference.count > 3 {
                    ids.removeSubrange(0..<2)
                    reference.removeSubrange(0..<2)
                }
            }
            Self.check(ids, reference)
        }
    }

    @Test func consecutiveIdsAreARun() {
        var ids = LeafIDs(UInt64(5)...UInt64(132))
        #expect(ids.isRun && ids.capacity == 0 && ids.count == 128)
        ids.removeSubrange(100..<128)
        ids.removeSubrange(0..<10)
        #expect(ids.isRun && Array(ids) == Array(UInt64(15)...UInt64(104)))
        ids.insert(14, at: 0)
        ids.append(105)
        #expect(ids.isRun && ids.first == 14 && ids.last == 105)
        // A gap spells the ids out; the run-shaped part split off is a run again.
        ids.insert(1_000, at: 40)
        #expect(!ids.isRun && ids[40] == 1_000 && ids[41] == 54)
        let tail = ids.extracting(41..<ids.count)
        #expect(tail.isRun && Array(tail) == Array(UInt64(54)...UInt64(105)))
        var joined = LeafIDs(UInt64(1)...UInt64(3))
        joined.insert(contentsOf: LeafIDs(UInt64(4)...UInt64(6)), at: 3)
        joined.insert(contentsOf: LeafIDs([UInt64(0)]), at: 0)
        #expect(Array(joined) == Array(UInt64(0)...UInt64(6)))
    }
}
