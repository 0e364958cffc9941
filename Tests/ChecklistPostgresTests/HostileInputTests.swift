import ChecklistModel
import ChecklistPostgres
import Testing

/// Bad input reaches PostgreSQL only as parameters.
@Suite(.enabled(if: TestCluster.binariesFound, TestCluster.skipReason), .timeLimit(.minutes(2)))
struct HostileInputTests {
    @Test(arguments: ["'); DROP TABLE lists; --", "Robert'); DELETE FROM changes;--", "$1 \\x00 E'\\\\'", "名前 🎉"])
    func aHostileNameIsJustAName(_ name: String) throws {
        let (store, _) = try TestCluster.freshStore()
        try store.commit([Fixture.create(1, name: name, icon: name), Fixture.create(2)])
        #expect(try store.list(ListID(1))?.summary.name == name)
        #expect(try store.list(ListID(1))?.summary.icon == name)
        #expect(try store.lists(in: .default).count == 2)
        #expect(try store.connection.execute("SELECT count(*) FROM changes").int64(0, 0) == 2)
    }

    /// U+0000 is valid UTF-8, so the model takes it; PostgreSQL text cannot
    /// hold it, so the exact bytes go to the bytea column and psql shows U+FFFD.
    @Test func namesWithNULRoundTripExactly() throws {
        let (store, _) = try TestCluster.freshStore()
        let name = "a\u{0}b"
        try store.commit([Fixture.create(1, name: name, icon: "\u{0}")])
        let record = try #require(try store.list(ListID(1)))
        #expect(record.summary.name == name)
        #expect(record.summary.icon == "\u{0}")
        let shown = try store.connection.execute("SELECT name FROM lists WHERE id = 1")
        #expect(try shown.string(0, 0) == "a\u{FFFD}b")
        // Item texts live in checkpoints (bytea): NUL is kept as is.
        let list = try SnapshotListFixture.one(id: 2, itemText: "x\u{0}y")
        try store.importLists { try $0.add(list) }
        let sink = CollectingSink()
        _ = try store.loadList(ListID(2), into: sink) { _ in }
        #expect(sink.items[ListID(2)]?.map(\.text) == ["x\u{0}y"])
    }

    @Test func aNamespaceWithNULIsRefused() throws {
        let (store, _) = try TestCluster.freshStore()
        let error = #expect(throws: PostgresError.self) { try store.commit([Fixture.create(1, namespace: Namespace("a\u{0}"))]) }
        #expect(error?.code == .unsupportedValue)
    }

    /// The layer's API takes Swift Strings (valid UTF-8 by construction; the
    /// wire layer refuses invalid UTF-8 with BAD_FIELD). Raw invalid bytes
    /// sent as text are refused by the server, with its SQLSTATE attached.
    @Test func invalidUTF8IsRefusedByTheServer() throws {
        let (store, _) = try TestCluster.freshStore()
        let error = #expect(throws: PostgresError.self) {
            try store.connection.execute("SELECT convert_from($1, 'UTF8')", [.bytea([0x61, 0xFF, 0xFE])])
        }
        #expect(error?.code == .statementFailed)
        #expect(error?.sqlState == "22021")
    }

    @Test func idsAboveBigintAreRefusedNotWrapped() throws {
        let (store, _) = try TestCluster.freshStore()
        let error = #expect(throws: PostgresError.self) { try store.commit([Fixture.create(UInt64(Int64.max) + 1)]) }
        #expect(error?.code == .unsupportedValue)
    }
}

enum SnapshotListFixture {
    static func one(id: UInt64, itemText: String) throws -> ListCheckpointBuilder {
        let builder = try ListCheckpointBuilder(list: .init(namespace: .default, id: ListID(id), name: "N", icon: "I",
                                                            revision: 3, nextItemID: ItemID(2), itemCount: 1))
        try builder.append(Item(id: ItemID(1), fields: ItemFields(text: itemText)))
        return builder
    }
}
