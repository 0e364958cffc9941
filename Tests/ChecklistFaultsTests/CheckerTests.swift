import ChecklistFaults
import ChecklistModel
import ChecklistWire
import Testing

/// The checker on small synthetic histories: the clean one passes, and
/// each broken one is reported with the kind of its one violation.
struct CheckerTests {
    typealias H = SyntheticHistory

    @Test func aCleanHistoryPasses() {
        let violations = H().check()
        #expect(violations.isEmpty, "\(violations)")
    }

    @Test func nodesThatDifferAreReported() {
        var h = H()
        h.otherRows = [Item(id: H.item, fields: ItemFields(text: "w1.1.0", checked: false))]
        #expect(h.kinds() == [.nodesDiffer])
    }

    @Test func feedsThatDifferAreReported() {
        var h = H()
        h.otherFeed = [H.created, H.inserted, ListChange(list: H.list, revision: 3, kind: .patched([.setChecked(H.item, false)]))]
        #expect(h.kinds() == [.feedsDiffer])
    }

    @Test func aFeedWithAGapIsReported() {
        var h = H()
        h.feed = [H.created, H.toggled]
        h.otherFeed = h.feed
        #expect(h.kinds().contains(.feedGap))
    }

    @Test func aFeedThatDoesNotReplayToTheRowsIsReported() {
        var h = H()
        h.rows = [Item(id: H.item, fields: ItemFields(text: "w1.1.0", checked: false))]
        h.otherRows = h.rows
        h.operations.removeAll { if case .page = $0.outcome { return true } else { return false } }
        #expect(h.kinds() == [.feedReplay])
    }

    @Test func anAcknowledgedInsertThatIsGoneIsReported() {
        var h = H()
        // The insert was acknowledged at revision 2, but what is there is another item's.
        let other = ListChange(list: H.list, revision: 2, kind: .patched([.insert(id: ItemID(2), index: 0, fields: ItemFields(text: "w3.1.0"))]))
        h.patch(client: 2, key: IdempotencyKey(client: 3, sequence: 1), [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "w3.1.0"))],
                at: 11, done: 1000, .indeterminate("lost"))
        h.feed = [H.created, other, ListChange(list: H.list, revision: 3, kind: .patched([.setChecked(ItemID(2), true)]))]
        h.rows = [Item(id: ItemID(2), fields: ItemFields(text: "w3.1.0", checked: true))]
        h.operations.removeAll { if case .page = $0.outcome { return true } else if case .changes = $0.outcome { return true } else { return false } }
        h.deliveries = []
        let kinds = h.kinds()
        #expect(kinds.contains(.ackedInsertLost))
        #expect(kinds.contains(.ackNotInFeed))
    }

    @Test func aPhantomItemIsReported() {
        var h = H()
        let phantom = ListChange(list: H.list, revision: 4, kind: .patched([.insert(id: ItemID(2), index: 1, fields: ItemFields(text: "w9.9.0"))]))
        h.feed.append(phantom)
        h.rows.append(Item(id: ItemID(2), fields: ItemFields(text: "w9.9.0")))
        h.finalRevision = 4
        #expect(h.kinds() == [.phantomItem])
    }

    @Test func aPatchAnsweredWithAnErrorThatTookEffectIsReported() {
        var h = H()
        let key = IdempotencyKey(client: 1, sequence: 2)
        h.patch(client: 0, key: key, [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "w1.2.0"))], at: 70, done: 80,
                .failed(code: ChecklistError.Code.conflict.rawValue, revision: 3, message: "stale"))
        h.feed.append(ListChange(list: H.list, revision: 4, kind: .patched([.insert(id: ItemID(2), index: 1, fields: ItemFields(text: "w1.2.0"))])))
        h.rows.append(Item(id: ItemID(2), fields: ItemFields(text: "w1.2.0")))
        h.finalRevision = 4
        #expect(h.kinds() == [.failedPatchApplied])
    }

    @Test func aKeyAppliedTwiceIsReported() {
        var h = H()
        h.feed.append(ListChange(list: H.list, revision: 4, kind: .patched([.insert(id: ItemID(2), index: 1, fields: ItemFields(text: "w1.1.0"))])))
        h.rows.append(Item(id: ItemID(2), fields: ItemFields(text: "w1.1.0")))
        h.finalRevision = 4
        let kinds = h.kinds()
        #expect(kinds.contains(.keyAppliedTwice))
        #expect(kinds.contains(.insertDuplicated))
    }

    @Test func anAcknowledgementThatIsNotTheChangeAtItsRevisionIsReported() {
        var h = H()
        let moved = ListChange(list: H.list, revision: 3, kind: .patched([.move(H.item, toIndex: 0)]))
        h.feed[2] = moved
        h.rows = [Item(id: H.item, fields: ItemFields(text: "w1.1.0"))]
        h.operations.removeAll { if case .page = $0.outcome { return true } else if case .changes = $0.outcome { return true } else { return false } }
        h.deliveries.removeLast()
        #expect(h.kinds() == [.ackNotInFeed])
    }

    @Test func aRevisionAcknowledgedTwiceIsReported() {
        var h = H()
        // A second toggle of item 1, sent while the first was in flight, acknowledged at the same revision.
        h.patch(client: 2, key: IdempotencyKey(client: 3, sequence: 1), [.toggle(.id(H.item))], node: 1, at: 31, done: 41,
                .patchOK(revision: 3, ids: []))
        #expect(h.kinds() == [.revisionAckedTwice])
    }

    @Test func twoAnswersToOneKeyAreReported() {
        var h = H()
        h.patch(client: 1, key: H.toggleKey, [.toggle(.id(H.item))], attempt: 1, node: 1, at: 42, done: 43,
                .failed(code: ChecklistError.Code.conflict.rawValue, revision: 3, message: "stale"))
        #expect(h.kinds() == [.keyAnswersDiffer])
    }

    @Test func aRetryAnsweredUnavailableIsNotASecondAnswer() {
        var h = H()
        h.patch(client: 1, key: H.toggleKey, [.toggle(.id(H.item))], attempt: 1, node: 1, at: 42, done: 43,
                .failed(code: ChecklistError.Code.unavailable.rawValue, revision: nil, message: "outcome unknown"))
        #expect(h.check().isEmpty)
    }

    @Test func revisionsGoingBackForOneClientAreReported() {
        var h = H()
        // Writer 1's second patch, sent after its first was acknowledged at 2, acknowledged at... 2 again? No: at 3,
        // and the first one's change is put at 3 too: the client saw 3 then 2.
        h.operations = []
        h.patch(client: 0, key: IdempotencyKey(client: 1, sequence: 1), [.toggle(.id(H.item))], at: 10, done: 20, .patchOK(revision: 3, ids: []))
        h.patch(client: 0, key: IdempotencyKey(client: 1, sequence: 2), [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "w1.2.0"))],
                at: 30, done: 40, .patchOK(revision: 2, ids: [TempRefAssignment(tempRef: 1, id: H.item)]))
        h.feed = [H.created, ListChange(list: H.list, revision: 2, kind: .patched([.insert(id: H.item, index: 0, fields: ItemFields(text: "w1.2.0"))])),
                  H.toggled]
        h.rows = [Item(id: H.item, fields: ItemFields(text: "w1.2.0", checked: true))]
        h.deliveries = []
        #expect(h.kinds() == [.clientOrder])
    }

    @Test func revisionsAgainstRealTimeOrderAreReported() {
        var h = H()
        // The toggle (writer 2) was acknowledged at revision 3 at 40 ms; the
        // insert (writer 1), first sent at 50 ms, got revision 2.
        h.operations = []
        h.patch(client: 1, key: H.toggleKey, [.toggle(.id(H.item))], at: 30, done: 40, .patchOK(revision: 3, ids: []))
        h.patch(client: 0, key: H.insertKey, [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "w1.1.0"))],
                at: 50, done: 60, .patchOK(revision: 2, ids: [TempRefAssignment(tempRef: 1, id: H.item)]))
        h.deliveries = []
        #expect(h.kinds() == [.realTimeOrder])
    }

    @Test func aPageThatIsNotTheListAtItsRevisionIsReported() {
        var h = H()
        // At revision 2 the item was not checked yet.
        h.page(revision: 2, rows: [Item(id: H.item, fields: ItemFields(text: "w1.1.0", checked: true))], at: 25)
        let violations = h.check()
        #expect(Set(violations.map(\.kind)) == [.pageNotCommitted])
        #expect(violations.first?.detail.contains("the rows are the list at revision 3") == true)
    }

    @Test func changesThatAreNotTheFeedAreReported() {
        var h = H()
        h.operations.append(Operation(id: h.operations.count, client: 9, node: 0, invokedAt: H.ms(70), completedAt: H.ms(71),
                                      call: .changes(list: H.list, since: 1, limit: 10),
                                      outcome: .changes(Changes(list: H.list, revision: 3, changes: [H.toggled]))))
        #expect(h.kinds() == [.changesNotFeed])
    }

    @Test func resyncForRetainedChangesIsReported() {
        var h = H()
        h.operations.append(Operation(id: h.operations.count, client: 9, node: 0, invokedAt: H.ms(70), completedAt: H.ms(71),
                                      call: .changes(list: H.list, since: 1, limit: 10),
                                      outcome: .failed(code: ChecklistError.Code.resyncRequired.rawValue, revision: 3, message: "no longer retained")))
        #expect(h.kinds() == [.resyncForRetained])
    }

    @Test func aSubscriberGivenAGapIsReported() {
        var h = H()
        h.deliveries.removeFirst()
        #expect(h.kinds() == [.subscriptionGap])
    }

    @Test func anAnswerHeldPastTheBoundIsReportedUnlessTheNodeWasPaused() {
        var h = H()
        h.patch(client: 0, key: IdempotencyKey(client: 1, sequence: 2), [.toggle(.id(H.item))], at: 100, done: 20_100,
                .indeterminate("no answer within 15 s"))
        #expect(h.kinds() == [.unboundedWait])
        h.faults = [FaultRecord(kind: .pause, node: 0, startedAt: H.ms(50), healedAt: H.ms(5000))]
        #expect(h.check().isEmpty)
    }

    @Test func aNodeThatCannotBeReadIsReported() {
        var h = H()
        h.readError = "cannot connect to node 1"
        #expect(h.kinds() == [.finalReadFailed])
    }
}
