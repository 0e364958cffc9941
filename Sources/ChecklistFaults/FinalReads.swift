import ChecklistModel
import ChecklistWire

/// One list as one node answers it after the heal: every row (GET_PAGE
/// from offset 0 until the end) and the whole feed (CHANGES_SINCE 0 until
/// the list's revision).
public struct NodeRead: Sendable, Equatable {
    public var node: Int
    public var list: ListID
    /// The rows, or nil when they could not be read.
    public var rows: [Item]?
    /// The revision every PAGE of the read named.
    public var revision: Revision?
    /// The changes from revision 1, or nil when they could not be read.
    public var feed: [ListChange]?
    /// Why something could not be read.
    public var error: String?

    public init(node: Int, list: ListID, rows: [Item]? = nil, revision: Revision? = nil, feed: [ListChange]? = nil, error: String? = nil) {
        self.node = node
        self.list = list
        self.rows = rows
        self.revision = revision
        self.feed = feed
        self.error = error
    }
}

/// The reads after the heal, which the checker compares with the history.
public enum FinalReads {
    /// Waits (bounded by `timeout`) until every node answers LIST_LISTS with
    /// the same, committed, revision of every list for 3 s, then reads every
    /// list from every node. Returns the reads and whether the nodes agreed
    /// before the deadline.
    public static func read(lists: [ListID], nodes: Int, port: @Sendable (Int) -> UInt16,
                            timeout: Duration = .seconds(60)) -> (reads: [NodeRead], settled: Bool) {
        let settled = waitUntilSettled(lists: lists, nodes: nodes, port: port, deadline: .now + timeout)
        var reads: [NodeRead] = []
        for node in 0..<nodes {
            for list in lists {
                // A failed read is tried twice more, a second apart: a fault
                // the node is still getting over is not yet a broken promise.
                var attempt = read(list, node: node, port: port(node))
                for _ in 0..<2 where attempt.error != nil {
                    Nemesis.wait(until: .now + .seconds(1))
                    attempt = read(list, node: node, port: port(node))
                }
                reads.append(attempt)
            }
        }
        return (reads, settled)
    }

    /// The revisions every node reports, polled until they agree, each is
    /// committed (the node's feed has the change at it), and they stay so
    /// for 3 s: longer than a node's reconnection backoff (2 s at most), so
    /// a node still holding changes it has not committed gets to commit them.
    static func waitUntilSettled(lists: [ListID], nodes: Int, port: (Int) -> UInt16, deadline: ContinuousClock.Instant) -> Bool {
        var previous: [ListID: Revision]?
        var since = ContinuousClock.now
        var rounds = 0
        while ContinuousClock.now < deadline && rounds < 10_000 {
            rounds += 1
            var seen: [[ListID: Revision]] = []
            for node in 0..<nodes {
                guard let client = NodeClient(node: node, port: port(node), name: "faults-settle") else { break }
                defer { client.close() }
                guard case .lists(let answer)? = try? client.request(.listLists(ListLists()), timeout: .seconds(5)) else { break }
                let revisions = Dictionary(answer.lists.map { ($0.id, $0.revision) }, uniquingKeysWith: max)
                let committed = lists.allSatisfy { list in
                    guard let revision = revisions[list], revision > 0 else { return false }
                    let answer = try? client.request(.changesSince(ChangesSince(list: list, revision: revision - 1, limit: 1)), timeout: .seconds(5))
                    guard case .changes(let changes)? = answer else { return false }
                    return changes.changes.last?.revision == revision
                }
                guard committed else { break }
                seen.append(revisions)
            }
            if seen.count == nodes, Set(seen).count == 1, let now = seen.first {
                if previous == now {
                    if ContinuousClock.now - since >= .seconds(3) { return true }
                } else {
                    previous = now
                    since = .now
                }
            } else {
                previous = nil
            }
            // Poll again shortly: the nodes follow each other's commits on their own.
            Nemesis.wait(until: .now + .milliseconds(500))
        }
        return false
    }

    static func read(_ list: ListID, node: Int, port: UInt16) -> NodeRead {
        var result = NodeRead(node: node, list: list)
        guard let client = NodeClient(node: node, port: port, name: "faults-final", connectTimeout: .seconds(10)) else {
            result.error = "cannot connect to node \(node)"
            return result
        }
        defer { client.close() }
        var rows: [Item] = []
        var revision: Revision?
        for _ in 0..<100_000 {
            let answer = try? client.request(.getPage(GetPage(list: list, start: .offset(UInt64(rows.count)), limit: 1000)), timeout: .seconds(20))
            guard case .page(let page)? = answer else {
                result.error = "GET_PAGE at \(rows.count): \(answer.map { "\($0)" } ?? "no answer")"
                return result
            }
            if let revision, revision != page.header.revision {
                result.error = "the list changed while it was read (revision \(revision), then \(page.header.revision))"
                return result
            }
            revision = page.header.revision
            rows += page.rows
            if page.rows.isEmpty || UInt64(rows.count) >= page.header.total { break }
        }
        result.rows = rows
        result.revision = revision
        var feed: [ListChange] = []
        for _ in 0..<100_000 {
            let since = feed.last?.revision ?? 0
            let answer = try? client.request(.changesSince(ChangesSince(list: list, revision: since, limit: 1000)), timeout: .seconds(20))
            guard case .changes(let changes)? = answer else {
                result.error = "CHANGES_SINCE \(since): \(answer.map { "\($0)" } ?? "no answer")"
                return result
            }
            feed += changes.changes
            if changes.changes.isEmpty || changes.changes.last!.revision >= changes.revision { break }
        }
        result.feed = feed
        return result
    }
}
