import ChecklistModel
@testable import ChecklistServer
import ChecklistWire
import Testing

/// Which revisions a request names that a node has not seen
/// (`Request.revisionsAhead`): what a PostgreSQL node catches up first.
@Suite struct RevisionsAheadTests {
    /// The store holds list 1 at 5 (4 committed) and list 2 at 3; list 9 is unknown.
    static func ahead(_ request: Request) -> [ListID: Revision] {
        let held: [ListID: Revision] = [ListID(1): 5, ListID(2): 3]
        return request.revisionsAhead(held: { held[$0] }, committed: { list, cached in list == ListID(1) ? 4 : cached })
    }

    static func patch(_ list: UInt64, base: Revision?) -> Request {
        .patch(Patch(list: ListID(list), baseRevision: base, ops: [.toggle(.id(ItemID(1)))]))
    }

    @Test func aPatchCountsABaseAboveTheStoresRevision() {
        #expect(Self.ahead(Self.patch(1, base: 5)) == [:])
        #expect(Self.ahead(Self.patch(1, base: 4)) == [:])
        #expect(Self.ahead(Self.patch(1, base: 6)) == [ListID(1): 6])
        #expect(Self.ahead(Self.patch(1, base: nil)) == [:])
        #expect(Self.ahead(Self.patch(9, base: 3)) == [ListID(9): 3])
        #expect(Self.ahead(Self.patch(9, base: nil)) == [:])
    }

    @Test func changesSinceAndSubscribeCountARevisionAboveTheCommittedOne() {
        #expect(Self.ahead(.changesSince(ChangesSince(list: ListID(1), revision: 5, limit: 10))) == [ListID(1): 5])
        #expect(Self.ahead(.changesSince(ChangesSince(list: ListID(1), revision: 4, limit: 10))) == [:])
        #expect(Self.ahead(.changesSince(ChangesSince(list: ListID(9), revision: 0, limit: 10))) == [ListID(9): 1])
        let subscribe = Subscribe(entries: [.init(list: ListID(1), revision: 5), .init(list: ListID(2), revision: 3),
                                            .init(list: ListID(2), revision: nil), .init(list: ListID(9), revision: 7)])
        #expect(Self.ahead(.subscribe(subscribe)) == [ListID(1): 5, ListID(9): 7])
        #expect(Self.ahead(.getPage(GetPage(list: ListID(9), limit: 10))) == [:])
    }
}
