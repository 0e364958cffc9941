import ChecklistClient
import ChecklistModel
import ChecklistTesting
import Foundation
import Testing

/// The apps' own files, made by a second implementation (Python's plistlib,
/// Tests/AppFiles/app_files.py), through the real `checklist import` into a
/// real server, and our exports read back by that implementation.
@Suite(.timeLimit(.minutes(10))) struct AppFilesCLITests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../AppFiles/app_files.py").standardized.path

    static func python(_ arguments: String...) throws -> String {
        let out = try ProcessRunner.run(executable: "/usr/bin/env", arguments: ["python3", script] + arguments)
        #expect(out.status == 0, "app_files.py \(arguments): \(out.stderr)")
        return out.stdout
    }

    @Test func theShoppingListSeedIsOneListOfItems() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let files = try TemporaryDirectory(prefix: "app-files")
        defer { files.remove() }
        _ = try Self.python("write", files.path)
        let out = try CLI(server: "127.0.0.1:\(server.port)").run("import", files.appending("seed.plist"))
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("Imported 1 list, 3 items"))
        let client = try await server.connect()
        let contents = try await SnapshotTransferTests.contents(client)
        #expect(contents.lists.map(\.name) == ["seed"])
        #expect(contents.items[contents.lists[0].id] == [
            Item(id: ItemID(1), fields: ItemFields(text: "Eggs", price: 299)),
            Item(id: ItemID(2), fields: ItemFields(text: "Bananas", price: 50)),
            Item(id: ItemID(3), fields: ItemFields(text: "Coffee", price: 701)),  // 7.005: half away from zero
        ])
        await client.close()
    }

    @Test func theShoppingListArchiveImportsAndExportsBack() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let files = try TemporaryDirectory(prefix: "app-files")
        defer { files.remove() }
        _ = try Self.python("write", files.path)
        let cli = CLI(server: "127.0.0.1:\(server.port)")
        let out = try cli.run("import", files.appending("items.plist"), "--name", "Shopping")
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("Imported 1 list, 4 items"))
        let client = try await server.connect()
        let contents = try await SnapshotTransferTests.contents(client)
        #expect(contents.lists.map(\.name) == ["Shopping"])
        // The app's uuids (app_files.py's SHOPPING) become the items' client keys on the server.
        let appUUIDs = ["6F9619FF-8B86-D011-B42D-00C04FC964FF", "0E984725-C51C-4BF4-9960-E1C80E27ABA0",
                        "A3BB189E-8BF9-3888-9912-ACE4E6543002", "C56A4180-65AA-42EC-A945-5FD21DEC0538"]
        let expected = [
            Item(id: ItemID(1), fields: ItemFields(text: "Milk", checked: true, price: 299, clientKey: appUUIDs[0])),
            Item(id: ItemID(2), fields: ItemFields(text: "Crème fraîche", price: 125, clientKey: appUUIDs[1])),
            Item(id: ItemID(3), fields: ItemFields(text: "Milk", checked: true, price: 13, clientKey: appUUIDs[2])),
            Item(id: ItemID(4), fields: ItemFields(text: "Bread", price: 1000, clientKey: appUUIDs[3])),
        ]
        #expect(contents.items[contents.lists[0].id] == expected)
        // A page read by key, as a client that announced CLIENT_KEYS reads it.
        let page = try await client.page(contents.lists[0].id, start: .key(appUUIDs[2]), limit: 10)
        #expect(page.offset == 2)
        #expect(page.items.map(\.fields.clientKey) == [appUUIDs[2], appUUIDs[3]])
        await client.close()

        // Out again as the app's archive, read by plistlib as NSKeyedUnarchiver would.
        let exported = try cli.run("export", files.appending("out.plist"), "--format", "keyed-archive", "--list", "Shopping")
        #expect(exported.status == 0, "\(exported.stderr)")
        let items = try #require(try JSONSerialization.jsonObject(with: Data(try Self.python("read", files.appending("out.plist")).utf8)) as? [[String: Any]])
        #expect(items.map { $0["name"] as? String } == expected.map(\.text))
        #expect(items.map { (($0["price"] as? Double ?? -1) * 100).rounded() } == expected.map { Double($0.fields.price!) })
        #expect(items.map { $0["inShoppingList"] as? Bool } == expected.map(\.checked))
        // The app's own uuids came back, through the server.
        #expect(items.map { $0["uuid"] as? String } == appUUIDs)

        // Several lists do not fit the app's one list.
        _ = try cli.run("create", "Other")
        let refused = try cli.run("export", files.appending("two.plist"), "--format", "keyed-archive")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("one list"))
    }

    @Test func theOldChecklistsArchiveImports() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let files = try TemporaryDirectory(prefix: "app-files")
        defer { files.remove() }
        _ = try Self.python("write", files.path)
        let cli = CLI(server: "127.0.0.1:\(server.port)")
        let out = try cli.run("import", files.appending("Checklists.plist"))
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("Imported 3 lists, 3 items"))
        let client = try await server.connect()
        let contents = try await SnapshotTransferTests.contents(client)
        #expect(contents.lists.map(\.name) == ["Birthdays", "Groceries", "Empty"])
        #expect(contents.lists.map(\.icon) == ["Birthdays", "Groceries", "No Icon"])
        #expect(contents.items[contents.lists[0].id] == [
            Item(id: ItemID(1), fields: ItemFields(text: "Anna", checked: false, due: 1_767_225_600, remind: true)),
            Item(id: ItemID(4), fields: ItemFields(text: "Bob", checked: true, due: 1_767_312_000)),
        ])
        #expect(contents.items[contents.lists[1].id] == [Item(id: ItemID(2), fields: ItemFields(text: "Milk", checked: true, due: 1_700_000_000))])
        await client.close()

        // --format plist is what PropertyListEncoder writes for [Checklist]: read by plistlib.
        let exported = try cli.run("export", files.appending("new.plist"), "--format", "plist")
        #expect(exported.status == 0, "\(exported.stderr)")
        let check = try ProcessRunner.run(executable: "/usr/bin/env", arguments: ["python3", "-c", """
            import plistlib, sys
            d = plistlib.load(open(sys.argv[1], "rb"))
            print(open(sys.argv[1], "rb").read(8).decode(), [(l["name"], l["iconName"], [(i["text"], i["checked"], i["shouldRemind"], i["itemID"], i["dueDate"].isoformat()) for i in l["items"]]) for l in d])
            """, files.appending("new.plist")])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "bplist00 [('Birthdays', 'Birthdays', [('Anna', False, True, 0, '2026-01-01T00:00:00'), ('Bob', True, False, 3, '2026-01-02T00:00:00')]), ('Groceries', 'Groceries', [('Milk', True, False, 1, '2023-11-14T22:13:20')]), ('Empty', 'No Icon', [])]")
    }

    /// JSON streams: a file larger than the reader's 64 KiB buffer, lists out
    /// of id order, items with and without ids, from standard input too.
    @Test func jsonStreams() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let files = try TemporaryDirectory(prefix: "json-stream")
        defer { files.remove() }
        var text = #"{"lists": ["#
        text += #"{"id": 9, "name": "Later", "items": [{"text": "only"}]},"#
        text += #"{"name": "Big", "icon": "Trips", "extra": {"ignored": [1, 2, {"x": null}]}, "items": ["#
        text += (1...3000).map { #"{"text": "item \#($0) \u00e9 \"q\"", "checked": \#($0 % 2 == 0), "price": \#($0)\#($0 == 5 ? #", "id": 5000"# : "")}"# }
            .joined(separator: ",\n")
        text += "]}], \"format\": \"checklists\", \"version\": 1}"
        let path = files.appending("big.json")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let cli = CLI(server: "127.0.0.1:\(server.port)")
        let out = try cli.json("import", path)
        #expect(out["lists"] as? Int == 2)
        #expect(out["items"] as? Int == 3001)
        let client = try await server.connect()
        let contents = try await SnapshotTransferTests.contents(client)
        let big = try #require(contents.lists.first { $0.name == "Big" })
        let rows = try #require(contents.items[big.id])
        #expect(rows.count == 3000)
        #expect(rows[0] == Item(id: ItemID(5001), fields: ItemFields(text: "item 1 é \"q\"", price: 1)))
        #expect(rows[4].id == ItemID(5000))
        #expect(rows[2999] == Item(id: ItemID(7999), fields: ItemFields(text: "item 3000 é \"q\"", checked: true, price: 3000)))
        await client.close()

        let piped = try ProcessRunner.run(executable: "/bin/sh", arguments: ["-c",
            "printf '[{\"name\": \"Tea\", \"price\": 3.5}]' | '\(try ProductLocator.path(of: "checklist"))' --server 127.0.0.1:\(server.port) import - --name Piped"])
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stdout.contains("Imported 1 list, 1 item from -"))
        let bad = files.appending("bad.json")
        try Data(#"{"lists": [{"name": "A", "items": [{"text": "x", "checked": 1}]}]}"#.utf8).write(to: URL(fileURLWithPath: bad))
        let refused = try cli.run("import", bad)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("lists[0].items[0].checked"))
    }
}
