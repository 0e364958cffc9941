import ChecklistModel
import ChecklistWire

/// Decides, from the history and the final reads alone, whether the
/// service kept its promises (docs/FAULTS.md lists them). An unknown
/// outcome (no answer, `UNAVAILABLE`) may or may not have happened; a
/// definite one must be exactly what the final state shows.
///
/// The final feed of each list (read from every node after the heal,
/// CHANGES_SINCE 0) is taken as the order of commits: every other check
/// measures the history against it.
public struct Checker: Sendable {
    public var history: History
    public var reads: [NodeRead]
    /// Answers slower than this, on a node that was not paused or
    /// stopped meanwhile, are `unboundedWait`; nil: not checked.
    public var answerBound: Duration?

    public init(history: History, reads: [NodeRead], answerBound: Duration? = nil) {
        self.history = history
        self.reads = reads
        self.answerBound = answerBound
    }

    /// The feed and rows the checks measure against, per list.
    struct Final {
        var feed: [ListChange]
        /// The change at each revision.
        var byRevision: [Revision: ListChange]
        var rows: [Item]
        var revision: Revision
        /// Whether the feed runs from revision 1 without a gap.
        var complete: Bool
    }

    /// Every violation found, in the order of `Violation.Kind`.
    public func check() -> [Violation] {
        var violations: [Violation] = []
        let finals = checkFinalReads(&violations)
        checkPatches(finals, &violations)
        checkPages(finals, &violations)
        checkChanges(finals, &violations)
        checkDeliveries(finals, &violations)
        checkWaits(&violations)
        return violations.enumerated().sorted { ($0.element.kind, $0.offset) < ($1.element.kind, $1.offset) }.map(\.element)
    }

    // MARK: The final reads

    /// Nodes identical; feeds identical, gapless, replaying to the rows.
    func checkFinalReads(_ violations: inout [Violation]) -> [ListID: Final] {
        var finals: [ListID: Final] = [:]
        let lists = Array(Set(reads.map(\.list))).sorted()
        for list in lists {
            let mine = reads.filter { $0.list == list }.sorted { $0.node < $1.node }
            for read in mine where read.error != nil {
                violations.append(Violation(.finalReadFailed, list: list, "node \(read.node): \(read.error!)"))
            }
            let whole = mine.filter { $0.rows != nil && $0.feed != nil }
            guard let first = whole.first, let rows = first.rows, let feed = first.feed else { continue }
            for other in whole.dropFirst() {
                if other.revision != first.revision || ListReplay.comparable(other.rows!) != ListReplay.comparable(rows) {
                    violations.append(Violation(.nodesDiffer, list: list,
                                                "node \(first.node) has revision \(first.revision ?? 0) with \(rows.count) rows, node \(other.node) revision \(other.revision ?? 0) with \(other.rows!.count) rows; \(Self.firstDifference(rows, other.rows!))"))
                }
                if other.feed! != feed {
                    let at = feed.indices.first { $0 >= other.feed!.count || feed[$0] != other.feed![$0] } ?? feed.count
                    violations.append(Violation(.feedsDiffer, list: list,
                                                "node \(first.node) has \(feed.count) changes, node \(other.node) \(other.feed!.count); first difference at position \(at): \(at < feed.count ? Describe.change(feed[at]) : "none") against \(at < other.feed!.count ? Describe.change(other.feed![at]) : "none")"))
                }
            }
            var final = Final(feed: feed, byRevision: [:], rows: rows, revision: first.revision ?? 0, complete: true)
            var expected: Revision = 1
            for change in feed {
                if change.revision != expected && final.complete {
                    violations.append(Violation(.feedGap, list: list, "node \(first.node)'s feed has revision \(change.revision) where \(expected) was due"))
                    final.complete = false
                }
                final.byRevision[change.revision] = change
                expected = change.revision + 1
            }
            if let head = feed.first, case .listCreated = head.kind, head.revision == 1 {} else {
                violations.append(Violation(.feedGap, list: list, "the feed does not start with the list's creation at revision 1 (it starts with \(feed.first.map(Describe.change) ?? "nothing"))"))
                final.complete = false
            }
            if (feed.last?.revision ?? 0) != final.revision {
                violations.append(Violation(.feedGap, list: list, "the feed ends at revision \(feed.last?.revision ?? 0), the PAGE names \(final.revision)"))
                final.complete = false
            }
            if final.complete {
                var replay = ListReplay()
                var problem: String?
                for change in feed {
                    if let p = replay.apply(change), problem == nil { problem = "revision \(change.revision): \(p)" }
                }
                if let problem {
                    violations.append(Violation(.feedReplay, list: list, "the feed does not apply: \(problem)"))
                } else if replay.items != ListReplay.comparable(rows) {
                    violations.append(Violation(.feedReplay, list: list, "replaying the feed gives \(replay.items.count) rows, node \(first.node) has \(rows.count); \(Self.firstDifference(replay.items, rows))"))
                }
            }
            finals[list] = final
        }
        return finals
    }

    /// Where two row lists first differ, for a violation's detail.
    static func firstDifference(_ a: [Item], _ b: [Item]) -> String {
        let a = ListReplay.comparable(a), b = ListReplay.comparable(b)
        guard let i = (0..<min(a.count, b.count)).first(where: { a[$0] != b[$0] }) ?? (a.count == b.count ? nil : min(a.count, b.count)) else {
            return "same rows"
        }
        func show(_ rows: [Item]) -> String { i < rows.count ? "\(rows[i].id) \"\(rows[i].text)\"\(rows[i].checked ? " checked" : "")" : "the end" }
        return "first difference at row \(i): \(show(a)) against \(show(b))"
    }

    /// Seconds, for details.
    static func seconds(_ nanoseconds: UInt64) -> String {
        let ms = nanoseconds / 1_000_000
        return "\(ms / 1000).\(String(ms % 1000).leftPadded(3))s"
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
