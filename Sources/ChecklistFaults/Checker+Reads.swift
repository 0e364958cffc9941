import ChecklistModel
import ChecklistWire

extension Checker {
    /// Every PAGE read is the list as committed at the revision it names:
    /// the list is rebuilt from the final feed and compared at each one.
    func checkPages(_ finals: [ListID: Final], _ violations: inout [Violation]) {
        var pages: [ListID: [(Operation, PageMessage)]] = [:]
        for op in history.operations {
            if case .page(let page) = op.outcome { pages[page.header.list, default: []].append((op, page)) }
        }
        for (list, reads) in pages.sorted(by: { $0.key < $1.key }) {
            guard let final = finals[list], final.complete else { continue }
            var replay = ListReplay()
            var at = 0
            var wrong = 0
            for (op, page) in reads.sorted(by: { $0.1.header.revision < $1.1.header.revision }) {
                let revision = page.header.revision
                guard revision <= final.revision else {
                    violations.append(Violation(.pageNotCommitted, list: list, "node \(op.node) at \(Self.seconds(op.invokedAt)) (operation \(op.id)): a PAGE at revision \(revision), past the last committed \(final.revision)"))
                    continue
                }
                while replay.revision < revision && at < final.feed.count {
                    replay.apply(final.feed[at])
                    at += 1
                }
                let rows = replay.items
                let offset = Int(clamping: page.header.offset)
                let expected = offset < rows.count ? Array(rows[offset..<min(rows.count, offset + page.rows.count)]) : []
                if page.header.total != UInt64(rows.count) || ListReplay.comparable(page.rows) != expected {
                    wrong += 1
                    // Which revision the rows are, for the first few (each search replays the feed).
                    let hint = wrong <= 5 ? Self.whichRevision(page, final) : ""
                    violations.append(Violation(.pageNotCommitted, list: list,
                                                "node \(op.node) at \(Self.seconds(op.invokedAt)) (operation \(op.id)): PAGE at revision \(revision), offset \(offset), \(page.rows.count) rows, total \(page.header.total); committed at \(revision): \(rows.count) rows; \(Self.firstDifference(page.rows, expected))\(hint)"))
                }
            }
        }
    }

    /// The revision a wrong page does match, when one near it does.
    static func whichRevision(_ page: PageMessage, _ final: Final) -> String {
        let revision = page.header.revision
        let low = revision > 10 ? revision - 10 : 1
        var replay = ListReplay()
        var found: [Revision] = []
        for change in final.feed where change.revision <= revision + 10 {
            replay.apply(change)
            guard change.revision >= low else { continue }
            let rows = replay.items
            let offset = Int(clamping: page.header.offset)
            let slice = offset < rows.count ? Array(rows[offset..<min(rows.count, offset + page.rows.count)]) : []
            if UInt64(rows.count) == page.header.total && slice == ListReplay.comparable(page.rows) { found.append(change.revision) }
        }
        return found.isEmpty ? "" : "; the rows are the list at revision \(found.map(String.init).joined(separator: ", "))"
    }

    /// CHANGES answers are the feed; RESYNC_REQUIRED only for changes the
    /// database no longer keeps (this run keeps them all).
    func checkChanges(_ finals: [ListID: Final], _ violations: inout [Violation]) {
        for op in history.operations {
            guard case let .changes(list, since, _) = op.call, let final = finals[list], final.complete else { continue }
            switch op.outcome {
            case .changes(let answer):
                var expected = since + 1
                for change in answer.changes {
                    if change.revision != expected || final.byRevision[change.revision] != change {
                        violations.append(Violation(.changesNotFeed, list: list,
                                                    "node \(op.node) at \(Self.seconds(op.invokedAt)) (operation \(op.id)): CHANGES since \(since) has \(Describe.change(change)) where revision \(expected) was due, and the feed has \(final.byRevision[change.revision].map(Describe.change) ?? "none")"))
                        break
                    }
                    expected += 1
                }
            case let .failed(code, revision, message) where code == ChecklistError.Code.resyncRequired.rawValue:
                if since <= final.revision {
                    violations.append(Violation(.resyncForRetained, list: list,
                                                "node \(op.node) at \(Self.seconds(op.invokedAt)) (operation \(op.id)): CHANGES_SINCE \(since) answered RESYNC_REQUIRED (revision \(revision.map(String.init) ?? "none"), \"\(message)\"); the database keeps every change to \(final.revision)"))
                }
            default: break
            }
        }
    }

    /// Each subscriber is given every change of each list once, in order,
    /// across its moves between nodes, and each is the feed's.
    func checkDeliveries(_ finals: [ListID: Final], _ violations: inout [Violation]) {
        enum Event { case start(SubscriptionStart), delivery(Delivery) }
        let events = (history.subscriptions.map { (at: $0.at, rank: 0, event: Event.start($0)) }
            + history.deliveries.map { (at: $0.at, rank: 1, event: Event.delivery($0)) })
            .enumerated().sorted { ($0.element.at, $0.element.rank, $0.offset) < ($1.element.at, $1.element.rank, $1.offset) }
            .map(\.element.event)
        var expected: [Int: [ListID: Revision]] = [:]
        var reported: [Int: [ListID: Int]] = [:]
        func report(_ subscriber: Int, _ list: ListID, _ v: Violation) {
            // At most 5 per subscriber and list: one slip puts every later one off.
            reported[subscriber, default: [:]][list, default: 0] += 1
            if reported[subscriber]![list]! <= 5 { violations.append(v) }
        }
        for event in events {
            switch event {
            case .start(let start):
                guard let final = finals[start.list], final.complete else { continue }
                switch Subscribed.Status(rawValue: start.status) {
                case .resync?:
                    if let asked = start.asked, asked <= final.revision {
                        report(start.subscriber, start.list, Violation(.resyncForRetained, list: start.list,
                            "subscriber \(start.subscriber) session \(start.session) on node \(start.node) at \(Self.seconds(start.at)): SUBSCRIBE from revision \(asked) answered RESYNC (revision \(start.reported)); the database keeps every change"))
                    }
                    expected[start.subscriber, default: [:]][start.list] = start.reported + 1
                case .live? where start.asked == nil:
                    expected[start.subscriber, default: [:]][start.list] = start.reported + 1
                default: break
                }
            case .delivery(let d):
                let list = d.change.list
                guard let final = finals[list], final.complete else { continue }
                if final.byRevision[d.change.revision] != d.change {
                    report(d.subscriber, list, Violation(.changesNotFeed, list: list,
                        "subscriber \(d.subscriber) session \(d.session) on node \(d.node) at \(Self.seconds(d.at)) was given \(Describe.change(d.change)), the feed has \(final.byRevision[d.change.revision].map(Describe.change) ?? "nothing")"))
                }
                if let due = expected[d.subscriber]?[list], due != d.change.revision {
                    report(d.subscriber, list, Violation(.subscriptionGap, list: list,
                        "subscriber \(d.subscriber) session \(d.session) on node \(d.node) at \(Self.seconds(d.at)) was given revision \(d.change.revision) where \(due) was due"))
                }
                expected[d.subscriber, default: [:]][list] = d.change.revision + 1
            }
        }
    }

    /// Answers bounded: no answer waited past `answerBound` on a node that
    /// ran all along (not paused, not stopped).
    func checkWaits(_ violations: inout [Violation]) {
        guard let bound = answerBound else { return }
        let limit = UInt64(bound.components.seconds) * 1_000_000_000 + UInt64(bound.components.attoseconds / 1_000_000_000)
        for op in history.operations {
            guard case .patch(let call) = op.call else { continue }
            let end = op.completedAt ?? history.endedAt
            guard end > op.invokedAt, end - op.invokedAt > limit else { continue }
            let excused = history.faults.contains { fault in
                guard fault.node == op.node, [.pause, .kill, .term].contains(fault.kind) else { return false }
                return fault.startedAt < end && (fault.healedAt ?? .max) > op.invokedAt
            }
            if !excused {
                violations.append(Violation(.unboundedWait, list: call.list,
                                            "key \(call.key) attempt \(call.attempt) to node \(op.node) at \(Self.seconds(op.invokedAt)) waited \(Self.seconds(end - op.invokedAt)) (bound \(bound)): \(Self.describe([op]))"))
            }
        }
    }
}
