@testable import checklist
import ChecklistClient
import Testing

/// The `checklist` CLI's parsing: `ParsedArguments`, then `Command(spec:parsed:)`
/// checked against each command's `CommandSpec`, then the server address.
@Suite(.timeLimit(.minutes(10)))
struct ChecklistCommandTests {
    /// Parses `line` (split at spaces) into a command, or its usage error.
    func command(_ line: String) throws(UsageError) -> Command {
        let parsed = ParsedArguments(line.split(separator: " ").map(String.init))
        guard let spec = parsed.command.flatMap(Commands.named) else {
            throw UsageError(message: "no such command", command: nil)
        }
        return try Command(spec, parsed)
    }

    func usageMessage(_ line: String) -> String? {
        do throws(UsageError) {
            _ = try command(line)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func listCommands() throws {
        guard case .lists = try command("lists") else { Issue.record("lists"); return }
        guard case .create(let name, let icon) = try command("create Groceries --icon Inbox"), name == "Groceries", icon == "Inbox"
        else { Issue.record("create"); return }
        guard case .create(_, "No Icon") = try command("create Groceries") else { Issue.record("default icon"); return }
        guard case .rename(.name("Groceries"), "Food") = try command("rename Groceries Food") else { Issue.record("rename"); return }
        guard case .delete(.id(let id)) = try command("delete 12"), id == ListID(12) else { Issue.record("delete"); return }
        guard case .show(.id(let list), 5, 10, .checked) = try command("show 3 --offset 5 --limit 10 --filter checked"),
              list == ListID(3) else { Issue.record("show"); return }
        guard case .show(_, 0, 50, .all) = try command("show 3") else { Issue.record("show defaults"); return }
    }

    @Test func itemCommands() throws {
        guard case .add(.name("Groceries"), let fields, at: 2) = try command("add Groceries Milk --at 2 --price 3.50 --due 2026-05-01")
        else { Issue.record("add"); return }
        #expect(fields.text == "Milk" && fields.price == 350 && fields.due == 1_777_593_600)
        guard case .change(.id(_), let item, .move(toIndex: 4)) = try command("move 1 7 4"), item == ItemID(7)
        else { Issue.record("move"); return }
        guard case .change(_, _, .setText("Bread")) = try command("edit 1 7 Bread") else { Issue.record("edit"); return }
        for (verb, expected) in [("check", "check"), ("uncheck", "uncheck"), ("toggle", "toggle"), ("remove", "remove")] {
            guard case .change(_, _, let change) = try command("\(verb) 1 2") else { Issue.record("\(verb) did not parse"); continue }
            #expect("\(change)" == expected)
        }
    }

    @Test func serverCommands() throws {
        guard case .ping = try command("ping"), case .stats = try command("stats") else { Issue.record("ping/stats"); return }
        guard case .watch(let lists, from: 9, count: 3) = try command("watch 2 --from 9 --count 3"), lists.count == 1
        else { Issue.record("watch"); return }
        guard case .watch(let all, from: nil, count: nil) = try command("watch"), all.isEmpty else { Issue.record("watch all"); return }
        guard case .export(file: "out.json", let chosen, format: .json) = try command("export out.json --list 2 --list Food --format json")
        else { Issue.record("export"); return }
        #expect(chosen.map { "\($0)" } == ["id(2)", "name(\"Food\")"])
        guard case .import(file: "in.ckss", replace: true, name: nil) = try command("import in.ckss --replace") else { Issue.record("import"); return }
        guard case .import(file: "seed.plist", replace: false, name: "Shopping") = try command("import seed.plist --name Shopping")
        else { Issue.record("import --name"); return }
    }

    @Test(arguments: [
        ("show", "missing argument LIST"),
        ("rename 1 a b", "unexpected argument 'b' (quote a TEXT or NAME with spaces)"),
        ("show 1 --at 3", "command 'show' has no option --at"),
        ("show 0", "bad LIST '0': list ids start at 1"),
        ("check 1 0", "bad ITEM '0': an item id is a number from 1 (see 'checklist show LIST')"),
        ("move 1 2 x", "bad INDEX 'x': expected a row index from 0"),
        ("show 1 --limit 0", "bad value '0' for --limit: expected a number from 1"),
        ("show 1 --filter some", "bad value 'some' for --filter: expected all, checked or unchecked"),
        ("add 1 Milk --price 3.505", "bad value '3.505' for --price: expected an amount like 3.50 (at most 2 decimals)"),
        ("watch 1 2 --from 3", "--from needs exactly one LIST"),
        ("export f --list 0", "bad LIST '0': list ids start at 1"),
        ("export f --format csv", "bad value 'csv' for --format: expected snapshot, json, plist or keyed-archive"),
    ])
    func badCommandLinesAreUsageErrors(line: String, message: String) {
        #expect(usageMessage(line) == message)
    }

    @Test func theServerAddressIsCheckedBeforeConnecting() throws {
        let good = ParsedArguments(["--server", "[::1]:7421", "ping"])
        let (_, server) = try checkedCommand(good)
        #expect(server.host == "::1" && server.port == 7421)
        #expect(throws: UsageError.self) { try checkedCommand(ParsedArguments(["--server", "localhost", "ping"])) }
        #expect(throws: UsageError.self) { try checkedCommand(ParsedArguments(["--server", "h:1", "frobnicate"])) }
    }

    @Test func helpAndAMissingCommandNeedNoServer() {
        #expect(answerHelpOrMissingCommand(ParsedArguments(["help", "show"])) == ExitStatus.success)
        #expect(answerHelpOrMissingCommand(ParsedArguments(["--help"])) == ExitStatus.success)
        #expect(answerHelpOrMissingCommand(ParsedArguments(["help", "frobnicate"])) == ExitStatus.usage)
        #expect(answerHelpOrMissingCommand(ParsedArguments([])) == ExitStatus.usage)
        #expect(answerHelpOrMissingCommand(ParsedArguments(["ping"])) == nil)
    }
}
