import ChecklistModel
import ChecklistPersistence
@testable import ChecklistServer
@testable import ChecklistStorage
import ChecklistWire
import Testing

/// The commit notices nodes send each other through PostgreSQL
/// (`CommitNotice`, docs/POSTGRES.md "Several nodes"), and the follower's
/// choice between the changes they carry and a read of the database.
struct CommitNoticeTests {
    func renames(_ list: UInt64, _ revisions: ClosedRange<Revision>, text: String = "x") -> [Change] {
        revisions.map { revision in
            Change(namespace: .default, list: ListID(list), revision: revision, kind: .patched([.setText(ItemID(revision), text)]),
                   idempotencyKey: IdempotencyKey(client: 7, sequence: revision))
        }
    }

    /// The bodies a commit stores for `changes` (`Change.encode`).
    func stored(_ changes: [ListID: [Change]]) -> [ListID: [[UInt8]]] {
        changes.mapValues { list in
            list.map { change in
                var writer = WireWriter()
                change.encode(into: &writer)
                return writer.bytes
            }
        }
    }

    func decode(_ text: String) -> [UInt8]? {
        Array(text.utf8).withUnsafeBufferPointer { Base64.decode($0) }
    }

    @Test func base64MatchesTheRFC4648Vectors() {
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(decode(encoded) == Array(plain.utf8))
        }
        let all = (0...255).map(UInt8.init)
        #expect(decode(Base64.encode(all)) == all)
        for bad in ["Zg=", "Z===", "Zm9v!A==", "=Zm9"] { #expect(decode(bad) == nil, "\(bad)") }
    }

    @Test func changesTravelWithTheirListsAndRevisions() throws {
        let one = renames(1, 4...6), two = renames(9, 1...1, text: "ünïcødé")
        let payloads = CommitNotice.payloads(node: 42, [(ListID(1), 6), (ListID(9), 1), (ListID(3), nil)],
                                             bodies: stored([ListID(1): one, ListID(9): two, ListID(3): renames(3, 2...2)]))
        #expect(payloads.count == 1)
        let notice = try #require(CommitNotice.parse(payloads[0]))
        #expect(notice.node == 42)
        #expect(CommitNotice.sender(of: payloads[0]) == 42)
        // A deleted list is announced with revision 0 and carries nothing.
        #expect(notice.lists == [CommitNotice.Entry(list: ListID(1), revision: 6, changes: one),
                                 CommitNotice.Entry(list: ListID(9), revision: 1, changes: two),
                                 CommitNotice.Entry(list: ListID(3), revision: 0)])
    }

    /// A list the node holds at the announced revision already (its
    /// committer rebased onto those changes) is parsed without its carried
    /// changes; the others keep theirs.
    @Test func changesOfListsHeldAlreadyAreNotDecoded() throws {
        let one = renames(1, 4...6), two = renames(2, 1...3)
        let payload = try #require(CommitNotice.payloads(node: 4, [(ListID(1), 6), (ListID(2), 3)],
                                                         bodies: stored([ListID(1): one, ListID(2): two])).first)
        var asked: [(ListID, Revision)] = []
        let notice = try #require(CommitNotice.parse(payload) { list, revision in
            asked.append((list, revision))
            return list == ListID(1)
        })
        #expect(asked.map(\.0) == [ListID(1), ListID(2)] && asked.map(\.1) == [6, 3])
        #expect(notice.lists == [CommitNotice.Entry(list: ListID(1), revision: 6),
                                 CommitNotice.Entry(list: ListID(2), revision: 3, changes: two)])
    }

    @Test func aNoticeWithoutChangesStillParses() throws {
        let notice = try #require(CommitNotice.parse("5 1:6 2:0"))
        #expect(notice.node == 5)
        #expect(notice.lists == [CommitNotice.Entry(list: ListID(1), revision: 6), CommitNotice.Entry(list: ListID(2), revision: 0)])
        for bad in ["", "x 1:2", "5 1", "5 a:2", "5 1:", "5 :2", "5 1:99999999999999999999"] {
            #expect(CommitNotice.parse(bad) == nil, "\(bad)")
        }
    }

    /// Changes that do not decode, or do not end at the revision announced,
    /// are dropped: the follower reads that list from the database.
    @Test func carriedChangesThatDoNotFitTheEntryAreDropped() throws {
        let good = try #require(CommitNotice.payloads(node: 1, [(ListID(1), 6)], bodies: stored([ListID(1): renames(1, 4...6)])).first)
        let bodies = String(good.split(separator: ":")[2])
        for payload in ["1 1:6:!!!!", "1 1:6:3:4", "1 1:7:\(bodies)", "1 2:6:\(bodies)", "1 1:6:\(bodies.dropLast(4))"] {
            let notice = try #require(CommitNotice.parse(payload), "\(payload)")
            #expect(notice.lists.map(\.changes) == [[]], "\(payload)")
        }
    }

    @Test func aBatchIsCutBelowTheLimitAndChangesTooBigTravelAsRevisions() throws {
        let lists = (1...400).map { ListID(UInt64($0)) }
        var changes: [ListID: [Change]] = [:]
        for list in lists { changes[list] = renames(list.rawValue, 1...3) }
        let huge = String(repeating: "h", count: CommitNotice.maxPayloadBytes)
        changes[ListID(401)] = renames(401, 1...1, text: huge)
        let payloads = CommitNotice.payloads(node: 3, lists.map { ($0, 3) } + [(ListID(401), 1)], bodies: stored(changes))
        #expect(payloads.count > 1)
        #expect(payloads.allSatisfy { $0.utf8.count <= CommitNotice.maxPayloadBytes })
        let entries = payloads.compactMap { CommitNotice.parse($0) }.flatMap(\.lists)
        #expect(entries.map(\.list) == lists + [ListID(401)])
        #expect(entries.dropLast().allSatisfy { $0.changes == changes[$0.list] })
        #expect(entries.last == CommitNotice.Entry(list: ListID(401), revision: 1))
    }

    /// The follower replays carried changes only when they run from the
    /// node's committed revision up to the one announced.
    @Test func carriedChangesAreUsedOnlyWhenTheyCoverTheGap() {
        let carried = renames(1, 4...8)
        #expect(ListCatchUp.carriedRun(carried, after: 3, through: 8) == carried)
        #expect(ListCatchUp.carriedRun(carried, after: 5, through: 8) == Array(carried.dropFirst(2)))
        #expect(ListCatchUp.carriedRun(carried, after: 5, through: 7) == Array(carried.dropFirst(2)))
        #expect(ListCatchUp.carriedRun(carried, after: 2, through: 8) == nil)  // revision 3 is missing
        #expect(ListCatchUp.carriedRun(carried, after: 3, through: 9) == nil)  // a later notice carried nothing
        #expect(ListCatchUp.carriedRun(carried, after: 8, through: 8) == nil)  // nothing to follow
        #expect(ListCatchUp.carriedRun(carried, after: 3, through: 0) == nil)  // not announced: a reconciliation
        #expect(ListCatchUp.carriedRun(renames(1, 1...1001), after: 0, through: 1001) == nil)  // more than one round
    }
}
