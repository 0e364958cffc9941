import ChecklistClient
import ChecklistModel
import ChecklistSnapshot
import ChecklistTesting
import Foundation
import Testing

/// `checklist export`/`import` in every format and `checklistd
/// export`/`import` on a stopped server's data directory, with the real
/// binaries.
@Suite(.timeLimit(.minutes(10))) struct TransferCLITests {
    @Test func exportAndImportInEveryFormat() async throws {
        let source = try TestServer.start()
        defer { source.stop() }
        let client = try await source.connect()
        try await SnapshotTransferTests.populate(client, lists: 3, items: 50)
        let before = try await SnapshotTransferTests.contents(client)
        await client.close()
        let files = try TemporaryDirectory(prefix: "transfer-cli")
        defer { files.remove() }
        let cli = CLI(server: "127.0.0.1:\(source.port)")

        let snapshot = try cli.json("export", files.appending("all.ckss.gz"))
        #expect(snapshot["lists"] as? Int == 3)
        #expect(snapshot["items"] as? Int == 147)
        #expect((snapshot["rawBytes"] as? Int ?? 0) > (snapshot["compressedBytes"] as? Int ?? 0))
        #expect(try ProcessRunner.run(executable: "/bin/sh", arguments: ["-c", "gzip -t \(files.appending("all.ckss.gz"))"]).status == 0)
        _ = try cli.json("export", files.appending("all.json"), "--format", "json")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: files.appending("all.json")))) as? [String: Any]
        #expect((json?["lists"] as? [Any])?.count == 3)
        let one = try cli.json("export", files.appending("one.plist"), "--format", "plist", "--list", "List 1", "--list", "3")
        #expect(one["lists"] as? Int == 2)

        for (file, mode) in [("all.ckss.gz", "merge"), ("all.json", "replace")] {
            let target = try TestServer.start()
            defer { target.stop() }
            let targetCLI = CLI(server: "127.0.0.1:\(target.port)")
            let imported = mode == "replace" ? try targetCLI.json("import", files.appending(file), "--replace")
                                             : try targetCLI.json("import", files.appending(file))
            #expect(imported["mode"] as? String == mode)
            #expect(imported["lists"] as? Int == 3)
            #expect(imported["items"] as? Int == 147)
            let other = try await target.connect()
            #expect(try await SnapshotTransferTests.contents(other) == before)
            await other.close()
        }

        // The property list keeps names, icons, texts, check marks, dates and
        // reminders (not prices, revisions or list ids: the apps have none).
        let target = try TestServer.start()
        defer { target.stop() }
        let imported = try CLI(server: "127.0.0.1:\(target.port)").json("import", files.appending("one.plist"))
        #expect(imported["format"] as? String == "plist")
        let other = try await target.connect()
        let after = try await SnapshotTransferTests.contents(other)
        #expect(after.lists.map(\.name) == ["List 1", "List 2"])
        for (old, new) in zip(before.lists[1...], after.lists) {
            let strip = { (items: [Item]) in items.map { Item(id: $0.id, fields: ItemFields(text: $0.text, checked: $0.checked,
                                                                                              due: $0.fields.due, remind: $0.fields.remind)) } }
            #expect(strip(after.items[new.id]!) == strip(before.items[old.id]!))
        }
        await other.close()
    }

    @Test(arguments: ["xml", "binary"])
    func importsTheAppsPropertyList(_ format: String) async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let files = try TemporaryDirectory(prefix: "plist")
        defer { files.remove() }
        let lists: [Any] = [
            ["name": "Birthdays", "iconName": "Birthdays", "items": [
                ["text": "Anna", "checked": false, "dueDate": Date(timeIntervalSince1970: 1_767_225_600), "shouldRemind": true, "itemID": 0],
                ["text": "Bob", "checked": true, "shouldRemind": false, "itemID": 1],
            ]] as [String: Any],
            ["name": "To Do", "iconName": "Chores", "items": [
                ["text": "Walk the dog", "checked": false, "shouldRemind": false, "itemID": 2],
            ]] as [String: Any],
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: lists, format: format == "xml" ? .xml : .binary, options: 0)
        let path = files.appending("Checklists.plist")
        try data.write(to: URL(fileURLWithPath: path))
        let cli = CLI(server: "127.0.0.1:\(server.port)")
        let out = try cli.run("import", path)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("Imported 2 lists, 3 items"))
        let client = try await server.connect()
        let contents = try await SnapshotTransferTests.contents(client)
        #expect(contents.lists.map(\.name) == ["Birthdays", "To Do"])
        #expect(contents.lists.map(\.icon) == ["Birthdays", "Chores"])
        #expect(contents.items[contents.lists[0].id] == [
            Item(id: ItemID(1), fields: ItemFields(text: "Anna", checked: false, due: 1_767_225_600, remind: true)),
            Item(id: ItemID(2), fields: ItemFields(text: "Bob", checked: true)),
        ])
        #expect(contents.items[contents.lists[1].id]?.map(\.id) == [ItemID(3)])
        await client.close()

        let bad = files.appending("bad.plist")
        try Data("<?xml version=\"1.0\"?><plist><array><dict><key>items</key><array/></dict></array></plist>".utf8)
            .write(to: URL(fileURLWithPath: bad))
        let refused = try cli.run("import", bad)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("BAD_FILE") && refused.stderr.contains("name"))
    }

    @Test func offlineExportAndImportOfADataDirectory() async throws {
        let source = try TestServer.start()
        let client = try await source.connect()
        try await SnapshotTransferTests.populate(client, lists: 3, items: 40)
        let before = try await SnapshotTransferTests.contents(client)
        await client.close()
        _ = source.process.stop()
        defer { source.directory.remove() }
        let files = try TemporaryDirectory(prefix: "offline")
        defer { files.remove() }
        let checklistd = try ProductLocator.path(of: "checklistd")
        let file = files.appending("store.ckss.gz")

        let exported = try ProcessRunner.run(executable: checklistd, arguments: ["export", "--data-dir", source.directory.path, file])
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(exported.stdout.contains("exported 3 lists, 117 items"))

        let target = try TemporaryDirectory(prefix: "offline-target")
        defer { target.remove() }
        let imported = try ProcessRunner.run(executable: checklistd, arguments: ["import", "--data-dir", target.path, file])
        #expect(imported.status == 0, "\(imported.stderr)")
        let server = try TestServer.start(directory: target)
        defer { _ = server.process.stop() }
        let again = try await server.connect()
        #expect(try await SnapshotTransferTests.contents(again) == before)
        await again.close()

        // With the server running the directory is locked.
        let locked = try ProcessRunner.run(executable: checklistd, arguments: ["import", "--data-dir", target.path, file])
        #expect(locked.status == 1)
        #expect(locked.stderr.contains("LOCKED"))
    }
}
