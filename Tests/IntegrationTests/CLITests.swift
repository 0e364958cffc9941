import ChecklistTesting
import Foundation
import Testing

/// The `checklist` command-line client against the real server: the flow a
/// user types, read back through `--json`, and the documented exit codes.
@Suite(.timeLimit(.minutes(10))) struct CLITests {
    @Test func createAddShowCheckFilterMoveRemove() throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let cli = CLI(server: "127.0.0.1:\(server.port)")

        let created = try cli.json("create", "Groceries", "--icon", "Groceries")
        let listID = try #require(created["id"] as? Int)
        #expect(created["name"] as? String == "Groceries")
        #expect(created["itemCount"] as? Int == 0)

        let milk = try #require((try cli.json("add", "Groceries", "Milk")["ids"] as? [Int])?.first)
        let eggs = try #require((try cli.json("add", "\(listID)", "Eggs", "--price", "2.49")["ids"] as? [Int])?.first)
        let bread = try #require((try cli.json("add", "Groceries", "Bread", "--at", "0", "--due", "2026-12-24")["ids"] as? [Int])?.first)

        var shown = try cli.json("show", "Groceries")
        #expect(shown["total"] as? Int == 3)
        var items = try #require(shown["items"] as? [[String: Any]])
        #expect(items.map { $0["text"] as? String } == ["Bread", "Milk", "Eggs"])
        #expect(items[2]["price"] as? Int == 249)
        #expect(items[0]["due"] as? String == "2026-12-24")

        let checked = try cli.json("check", "Groceries", "\(milk)")
        #expect(checked["revision"] as? Int == 5)
        shown = try cli.json("show", "Groceries", "--filter", "unchecked")
        items = try #require(shown["items"] as? [[String: Any]])
        #expect(items.map { $0["id"] as? Int } == [bread, eggs])
        #expect(shown["total"] as? Int == 2)

        _ = try cli.json("move", "Groceries", "\(eggs)", "0")
        _ = try cli.json("remove", "Groceries", "\(bread)")
        shown = try cli.json("show", "Groceries")
        items = try #require(shown["items"] as? [[String: Any]])
        #expect(items.map { $0["text"] as? String } == ["Eggs", "Milk"])
        #expect(items.map { $0["checked"] as? Bool } == [false, true])
        #expect(items.map { $0["index"] as? Int } == [0, 1])

        let lists = try #require(try cli.jsonArray("lists"))
        #expect(lists.count == 1)
        #expect(lists[0]["uncheckedCount"] as? Int == 1)
        #expect(lists[0]["revision"] as? Int == 7)
    }

    @Test func exitCodesSayWhatWentWrong() throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let cli = CLI(server: "127.0.0.1:\(server.port)")
        let missing = try cli.run("show", "999")
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("NOT_FOUND"))
        let usage = try cli.run("show")
        #expect(usage.status == 2)
        let unknown = try cli.run("frobnicate")
        #expect(unknown.status == 2)

        // A port nobody listens on: stop a server and reuse its port.
        let gone = try TestServer.start()
        let port = gone.port
        gone.stop()
        let unreachable = try CLI(server: "127.0.0.1:\(port)").run("lists")
        #expect(unreachable.status == 3)
    }

    @Test func helpTellsTheCommands() throws {
        let help = try CLI(server: "127.0.0.1:1").run("--help")
        #expect(help.status == 0)
        for command in ["lists", "create", "rename", "icon", "delete", "show", "add", "check", "uncheck",
                        "toggle", "edit", "remove", "move", "ping"] {
            #expect(help.stdout.contains(command), "help does not mention \(command)")
        }
    }
}

/// Runs the `checklist` binary built next to the tests.
struct CLI {
    var server: String
    /// Global options given before every command (e.g. `--tls-ca FILE`).
    var options: [String] = []

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    func run(_ arguments: String...) throws -> Output { try run(arguments) }

    func run(_ arguments: [String]) throws -> Output {
        let result = try ProcessRunner.run(executable: try ProductLocator.path(of: "checklist"),
                                           arguments: ["--server", server] + options + arguments,
                                           timeout: .seconds(30))
        return Output(status: result.status, stdout: result.stdout, stderr: result.stderr)
    }

    /// Runs with `--json`, expects exit 0 and one JSON object.
    func json(_ arguments: String...) throws -> [String: Any] {
        let out = try run(["--json"] + arguments)
        guard out.status == 0 else { throw TestFailure("checklist \(arguments) exited \(out.status): \(out.stderr)") }
        guard let object = try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any] else {
            throw TestFailure("not a JSON object: \(out.stdout)")
        }
        return object
    }

    func jsonArray(_ arguments: String...) throws -> [[String: Any]]? {
        let out = try run(["--json"] + arguments)
        guard out.status == 0 else { throw TestFailure("checklist \(arguments) exited \(out.status): \(out.stderr)") }
        return try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]]
    }
}
