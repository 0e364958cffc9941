@testable import checklist
import ChecklistClient
import ChecklistCommandLine
import Testing

/// The `checklist` CLI's parsing: the command line against `Commands.top`,
/// then `Command(parsed)` converting the values, then the server address.
@Suite(.timeLimit(.minutes(10)))
struct ChecklistCommandTests {
    /// Parses `line` (split at spaces) into a command, or its usage error.
    func command(_ line: String) throws(UsageError) -> Command {
        try Command(try parse(line.split(separator: " ").map(String.init)))
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
        guard case .ping = try command("ping"), case .stats(usage: false) = try command("stats") else { Issue.record("ping/stats"); return }
        guard case .stats(usage: true) = try command("stats --usage") else { Issue.record("stats --usage"); return }
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
        ("rename 1 a b", "unexpected argument 'b' (quote an argument with spaces)"),
        ("show 1 --at 3", "command 'show' has no option --at"),
        ("show 1 --bogus", "unknown option --bogus"),
        ("frobnicate", "unknown command 'frobnicate'"),
        ("", "missing command"),
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
        let good = try parse(["--server", "[::1]:7421", "ping"])
        let (_, servers) = try checkedCommand(good)
        #expect(servers.count == 1)
        #expect(servers.first?.host == "::1" && servers.first?.port == 7421)
        #expect(throws: UsageError.self) { try checkedCommand(try parse(["--server", "localhost", "ping"])) }
        #expect(throws: UsageError.self) { try checkedCommand(try parse(["--server", "h:1", "frobnicate"])) }
    }

    @Test func severalServersAreTriedInTheOrderGiven() throws {
        let (_, servers) = try checkedCommand(try parse(["--server", "a:7420, [::1]:7421,10.0.0.3:1", "ping"]))
        #expect(servers == [ServerAddress(host: "a", port: 7420), ServerAddress(host: "::1", port: 7421),
                            ServerAddress(host: "10.0.0.3", port: 1)])
        #expect(servers.map(\.description) == ["a:7420", "[::1]:7421", "10.0.0.3:1"])
    }

    @Test(arguments: ["", ",", "a:1,", ",a:1", "a:1,,b:2", "a:1,b", "a:0", "a:65536", "a:+1", ":1", "::1:7420",
                      "[]:1", "[::1:1", "a]:1", "a:1;b:2"])
    func aBadServerListIsAUsageError(list: String) {
        #expect(throws: UsageError.self) { try checkedCommand(try parse(["--server", list, "ping"])) }
        #expect(ServerAddress.list(parsing: list) == nil)
    }

    /// Help needs neither valid arguments nor a server: `help COMMAND`,
    /// `COMMAND --help`, whatever else is on the line.
    @Test func helpOfEveryCommand() throws {
        for spec in Commands.all {
            for line in [["help", spec.name], [spec.name, "--help"], ["--server", "bad", spec.name, "--bogus", "-h"]] {
                let parsed = try parse(line)
                #expect(parsed.helpRequested && parsed.subcommand?.name == spec.name, "\(line)")
                #expect(parsed.helpText == Help.command(spec))
            }
        }
        #expect(try parse(["--help"]).helpRequested && parse(["help"]).subcommand == nil)
        #expect(throws: UsageError("unknown command 'frobnicate'")) { try parse(["help", "frobnicate"]) }
        #expect(throws: UsageError("missing command")) { try parse([]) }
    }
}

/// The CLI's TLS options: flags over the `CHECKLIST_TLS*` variables.
@Suite(.timeLimit(.minutes(10)))
struct ChecklistTLSOptionTests {
    func tls(_ arguments: [String], environment: [String: String] = [:]) throws(UsageError) -> TLSClientConfiguration? {
        try checkedTLS(try parse(arguments + ["lists"]), environment: environment)
    }

    @Test func plaintextUnlessAsked() throws {
        #expect(try tls([]) == nil)
        #expect(try tls([], environment: ["CHECKLIST_TLS": "0"]) == nil)
        #expect(try tls(["--tls"]) == TLSClientConfiguration())
    }

    @Test func everyOptionAndWhatItImplies() throws {
        let all = try tls(["--tls-ca", "ca.pem", "--tls-server-name", "db.example", "--tls-cert=me.pem", "--tls-key", "me.key"])
        #expect(all == TLSClientConfiguration(caFile: "ca.pem", serverName: "db.example", certificateFile: "me.pem",
                                              privateKeyFile: "me.key"))
        #expect(try tls(["--tls-ca", "ca.pem"]) == TLSClientConfiguration(caFile: "ca.pem"), "--tls-ca implies --tls")
        // Global options may follow the command.
        let after = try parse(["show", "3", "--tls-server-name", "x.example"])
        #expect(after.positionals == ["3"])
        #expect(try checkedTLS(after, environment: [:])?.serverName == "x.example")
    }

    @Test func theVariablesAreDefaultsTheOptionsOverride() throws {
        let environment = ["CHECKLIST_TLS": "1", "CHECKLIST_TLS_CA": "env-ca.pem", "CHECKLIST_TLS_SERVER_NAME": "env.example"]
        #expect(try tls([], environment: environment) == TLSClientConfiguration(caFile: "env-ca.pem", serverName: "env.example"))
        #expect(try tls(["--tls-ca", "flag-ca.pem"], environment: environment)
                == TLSClientConfiguration(caFile: "flag-ca.pem", serverName: "env.example"))
        #expect(try tls([], environment: ["CHECKLIST_TLS_CERT": "c.pem", "CHECKLIST_TLS_KEY": "k.pem"])
                == TLSClientConfiguration(certificateFile: "c.pem", privateKeyFile: "k.pem"))
    }

    @Test(arguments: [
        (["--tls-cert", "c.pem"], [:], "--tls-cert needs --tls-key (the client certificate's private key)"),
        (["--tls-key", "k.pem"], [:], "--tls-key needs --tls-cert (the client certificate)"),
        (["--tls-server-name", ""], [:], "--tls-server-name must not be empty"),
        ([], ["CHECKLIST_TLS": "yes"], "CHECKLIST_TLS: 'yes' is neither 1 nor 0"),
    ] as [([String], [String: String], String)])
    func badCombinationsAreUsageErrors(arguments: [String], environment: [String: String], message: String) {
        do throws(UsageError) {
            _ = try tls(arguments, environment: environment)
            Issue.record("no usage error for \(arguments) \(environment)")
        } catch {
            #expect(error.message == message)
            #expect(error.usage.hasSuffix("Run 'checklist lists --help' for details."))
        }
    }

    @Test func malformedOptions() {
        #expect(throws: UsageError("option --tls takes no value")) { try parse(["--tls=1", "lists"]) }
        #expect(throws: UsageError("option --tls-ca needs a value")) { try parse(["lists", "--tls-ca"]) }
        #expect(throws: UsageError("unknown option --tls-bogus")) { try parse(["lists", "--tls-bogus", "x"]) }
    }

    @Test func helpTellsTheTLSOptionsAndExitStatus() {
        for option in ["--tls ", "--tls-ca FILE", "--tls-server-name NAME", "--tls-cert FILE", "--tls-key FILE", "$CHECKLIST_TLS_CA"] {
            #expect(Help.overview.contains(option), "\(option)")
        }
        #expect(Help.exitStatus.contains("3 the server cannot be reached, the connection was lost, or TLS failed"))
    }
}
