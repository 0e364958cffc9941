import ChecklistStore
import Testing

/// `FIFO`: order, indexed access across compactions, and popped elements
/// freed at once (not held by the array until it compacts).
@Suite struct FIFOTests {
    final class Tracked {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    @Test func elementsLeaveInOrderAcrossCompactions() {
        var fifo = FIFO<Int>()
        var expected = 0
        for i in 0..<5000 {
            fifo.append(i)
            if i % 3 != 0, let first = fifo.popFirst() {
                #expect(first == expected)
                expected += 1
            }
        }
        #expect(fifo.count == 5000 - expected)
        #expect(fifo.first == expected)
        #expect(fifo[fifo.count - 1] == 4999)
        fifo.removeAll { $0 % 2 == 0 }
        #expect(fifo.count > 0 && (0..<fifo.count).allSatisfy { fifo[$0] % 2 == 1 })
        while fifo.popFirst() != nil {}
        #expect(fifo.isEmpty && fifo.first == nil)
    }

    @Test func aPoppedElementIsFreedAtOnce() {
        var fifo = FIFO<Tracked>()
        weak var popped: Tracked?
        do {
            let first = Tracked(1)
            popped = first
            fifo.append(first)
        }
        for i in 2...10 { fifo.append(Tracked(i)) }
        #expect(fifo.popFirst()?.value == 1)
        #expect(popped == nil)
        #expect(fifo.count == 9 && fifo.first?.value == 2)
    }
}
