import ChecklistModel
import ChecklistRandom
@testable import ChecklistStore
import Testing

/// Random request sequences against the real store and `ReferenceStore`:
/// same answers and same errors for every request, same contents all along,
/// and a fresh store fed the committed changes ends up identical.
@Suite(.timeLimit(.minutes(10))) struct StoreRandomTests {
    static let limits = Limits(maxFrameBytes: 1 << 20, maxPageRows: 20, maxTextBytes: 30, maxBatchOps: 8)
    static let namespaces = [Namespace("alice"), Namespace("bob"), Namespace.default]

    /// Outcomes compare equal when both succeed with equal values, or both
    /// fail with the same code, field and revision (and, for NOT_FOUND, the
    /// same message: "list N not found" / "item N not found").
    static func expectSame<T: Equatable>(_ got: Result<T, ChecklistError>, _ expected: Result<T, ChecklistError>,
                                         _ what: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation) {
        switch (got, expected) {
        case (.success(let a), .success(let b)):
            #expect(a == b, "\(what())", sourceLocation: sourceLocation)
        case (.failure(let a), .failure(let b)):
            #expect(a.code == b.code && a.field == b.field && a.revision == b.revision,
                    "\(what()): got \(a), expected \(b)", sourceLocation: sourceLocation)
            if b.code == .notFound { #expect(a.message == b.message, sourceLocation: sourceLocation) }
        default:
            Issue.record("\(what()): got \(got), expected \(expected)", sourceLocation: sourceLocation)
        }
    }

    static func shortText(_ rng: inout SplitMix64) -> String {
        if rng.chance(3) { return String(repeating: "y", count: 31) }  // over maxTextBytes
        return ["", "milk", "Walk the dog", "Grüße", "日本語", "🍎🍐", "Eat ice cream"].randomElement(using: &rng) ?? ""
    }

    static func fields(_ rng: inout SplitMix64) -> ItemFields {
        var fields = Samples.fields(&rng)
        fields.text = shortText(&rng)
        return fields
    }

    /// A batch that is mostly valid for `list`, with occasional mistakes of
    /// every kind the store must refuse.
    static func randomOps(for list: ReferenceStore.List?, _ rng: inout SplitMix64) -> [PatchOperation] {
        let n = rng.chance(2) ? 0 : rng.chance(2) ? 9 : Int.random(in: 1...6, using: &rng)
        var ids = list?.items.map(\.id) ?? []
        var count = ids.count
        var temps: [UInt64] = []
        var ops: [PatchOperation] = []

        func ref(_ rng: inout SplitMix64) -> ItemRef {
            if !temps.isEmpty, rng.chance(30) { return .temp(temps.randomElement(using: &rng)!) }
            if rng.chance(1) { return .temp(999) }
            if ids.isEmpty || rng.chance(1) { return .id(ItemID(UInt64.random(in: 1...300, using: &rng))) }
            return .id(ids.randomElement(using: &rng)!)
        }

        for _ in 0..<n {
            switch ids.isEmpty && rng.chance(80) ? 0 : Int.random(in: 0..<100, using: &rng) {
            case 0..<45:
                var tempRef: UInt64?
                if rng.chance(50) {
                    if rng.chance(3) { tempRef = 0 }
                    else if !temps.isEmpty, rng.chance(3) { tempRef = temps.randomElement(using: &rng) }
                    else { tempRef = UInt64(temps.count + 1) * 7; temps.append(tempRef!) }
                } else if !rng.chance(2) {
                    // Track the new item as if we knew its id (usually right).
                    ids.append(ItemID((list?.nextItemID ?? 1) + UInt64(ops.count)))
                }
                let position: InsertPosition
                switch Int.random(in: 0..<4, using: &rng) {
                case 0, 1: position = .index(UInt64(rng.chance(3) ? count + 2 : Int.random(in: 0...count, using: &rng)))
                case 2: position = .after(ref(&rng))
                default: position = .end
                }
                ops.append(.insert(tempRef: tempRef, position: position, fields: fields(&rng)))
                count += 1
            case 45..<53:
                ops.append(.setText(ref(&rng), shortText(&rng)))
            case 53..<62:
                ops.append(rng.chance(50) ? .toggle(ref(&rng)) : .setChecked(ref(&rng), rng.chance(50)))
            case 62..<69:
                let other = fields(&rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: ops.append(.setDue(ref(&rng), other.due))
                case 1: ops.append(.setRemind(ref(&rng), other.remind))
                default: ops.append(.setPrice(ref(&rng), other.price))
                }
            case 69..<82:
                let target = ref(&rng)
                if case .id(let id) = target { ids.removeAll { $0 == id } }
                if case .temp(let t) = target { temps.removeAll { $0 == t } }
                ops.append(.delete(target))
                count = max(0, count - 1)
            default:
                let to = rng.chance(3) ? count : Int.random(in: 0..<max(count, 1), using: &rng)
                ops.append(.move(ref(&rng), toIndex: UInt64(to)))
            }
        }
        return ops
    }

    @Test("random requests match the reference model", arguments: [UInt64(1), 2, 3, 4])
    func randomRequests(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let recorder = ChangeRecorder()
        let store = Store(limits: Self.limits, treeShape: RowTreeShape(leafCapacity: 4, innerCapacity: 4), onCommit: recorder.record)
        var reference = ReferenceStore(limits: Self.limits)
        var committed = 0
        var failedPatches = 0
        var okPatches = 0
        var failures: [String: Int] = [:]

        for step in 0..<2500 {
            let ns = Self.namespaces.randomElement(using: &rng)!
            // Mostly lists of this namespace, sometimes another's or none.
            let own = reference.lists.values.filter { $0.namespace == ns }.map(\.id).sorted()
            let all = reference.lists.keys.sorted()
            let listID: ListID
            if !own.isEmpty, rng.chance(94) {
                listID = own.randomElement(using: &rng)!
            } else if !all.isEmpty, rng.chance(50) {
                listID = all.randomElement(using: &rng)!
            } else {
                listID = ListID(reference.nextListID + UInt64.random(in: 0...2, using: &rng))
            }
            let before = recorder.changes.count
            var mutated = false
            let roll = Int.random(in: 0..<100, using: &rng)

            if roll < 2 || own.isEmpty && roll < 30 {
                let name = rng.chance(5) ? "" : rng.chance(5) ? String(repeating: "n", count: 31) : "List \(step)"
                let icon = rng.chance(5) ? String(repeating: "i", count: 31) : "Groceries"
                let got = Result { () throws(ChecklistError) in try store.createList(in: ns, name: name, icon: icon) }
                let expected = Result { () throws(ChecklistError) in try reference.createList(ns, name: name, icon: icon) }
                Self.expectSame(got, expected, "step \(step): create")
                mutated = (try? expected.get()) != nil
            } else if roll < 6 {
                let name: String? = rng.chance(50) ? nil : rng.chance(10) ? "" : "Renamed \(step)"
                let icon: String? = rng.chance(50) ? nil : "Trips"
                let got = Result { () throws(ChecklistError) in try store.updateList(in: ns, list: listID, name: name, icon: icon) }
                let expected = Result { () throws(ChecklistError) in try reference.updateList(ns, listID, name: name, icon: icon) }
                Self.expectSame(got, expected, "step \(step): update")
                mutated = (try? expected.get()) != nil
            } else if roll < 7 {
                let got = Result { () throws(ChecklistError) in try store.deleteList(in: ns, list: listID) }
                let expected = Result { () throws(ChecklistError) in try reference.deleteList(ns, listID) }
                Self.expectSame(got, expected, "step \(step): delete")
                mutated = (try? expected.get()) != nil
            } else if roll < 70 {
                let list = reference.lists[listID]
                let ops = Self.randomOps(for: list, &rng)
                var base: Revision?
                if let list, rng.chance(40) { base = rng.chance(90) ? list.revision : list.revision - 1 }
                let got = Result { () throws(ChecklistError) in try store.patch(in: ns, list: listID, baseRevision: base, ops: ops) }
                let expected = Result { () throws(ChecklistError) in try reference.patch(ns, listID, base: base, ops: ops) }
                Self.expectSame(got, expected, "step \(step): patch \(ops)")
                if case .success(let result) = got {
                    okPatches += 1
                    #expect(recorder.changes.last == Change(namespace: ns, list: listID, revision: result.revision, kind: .patched(result.applied)))
                } else {
                    failedPatches += 1
                    if case .failure(let e) = got { failures["\(e.code) \(e.field ?? "")", default: 0] += 1 }
                }
                mutated = (try? expected.get()) != nil
            } else {
                let list = reference.lists[listID]
                let filter = RowFilter.allCases.randomElement(using: &rng)!
                let start: PageStart
                if let list, !list.items.isEmpty, rng.chance(40) {
                    start = .anchor(rng.chance(90) ? list.items.randomElement(using: &rng)!.id : ItemID(9999))
                } else {
                    start = .offset(UInt64.random(in: 0...UInt64((list?.items.count ?? 0) + 3), using: &rng))
                }
                let limit = rng.chance(3) ? 0 : rng.chance(3) ? 21 : Int.random(in: 1...20, using: &rng)
                let got = Result { () throws(ChecklistError) in try store.page(in: ns, list: listID, start: start, limit: limit, filter: filter) }
                let expected = Result { () throws(ChecklistError) in try reference.page(ns, listID, start: start, limit: limit, filter: filter) }
                Self.expectSame(got, expected, "step \(step): page \(start) \(limit) \(filter)")
            }

            if mutated { committed += 1 }
            #expect(recorder.changes.count == before + (mutated ? 1 : 0), "step \(step): one change per accepted request")
            #expect(store.lists(in: ns) == reference.summaries(ns))
            if step % 50 == 0 {
                #expect(StoreContents(store) == StoreContents(reference), "step \(step): contents")
            }
        }

        #expect(StoreContents(store) == StoreContents(reference))
        #expect(recorder.changes.count == committed)
        #expect(okPatches > 300 && failedPatches > 100, "enough of both: \(okPatches) accepted, \(failedPatches) refused: \(failures)")

        // Per list, the committed changes carry revisions 1, 2, 3, ... in order.
        var lastRevision: [ListID: Revision] = [:]
        for change in recorder.changes {
            #expect(change.revision == (lastRevision[change.list] ?? 0) + 1)
            lastRevision[change.list] = change.revision
        }

        // Replaying the changes rebuilds the same store, with another tree shape.
        let replica = Store()
        for change in recorder.changes { try replica.replay(change) }
        #expect(StoreContents(replica) == StoreContents(store))
    }
}
