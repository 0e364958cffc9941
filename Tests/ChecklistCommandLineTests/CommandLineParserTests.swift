import ChecklistCommandLine
import Testing

/// The one parser of the executables, against a small spec of each shape:
/// options only, positionals, subcommands with global options.
@Suite(.timeLimit(.minutes(10)))
struct CommandLineParserTests {
    static let server = CommandSpec(name: "server", options: [
        .value("--port", "PORT", "the port"),
        .flag("--verbose", "say more"),
        .repeated("--list", "LIST", "a list; repeat for several"),
    ])

    static let tool = CommandSpec(
        name: "tool", globalOptions: [.value("--server", "HOST:PORT", "the server"), .flag("--json", "JSON")],
        subcommands: [
            CommandSpec(name: "show", summary: "show a list", positionals: [Positional("LIST")],
                        options: [.value("--limit", "N", "rows")]),
            CommandSpec(name: "watch", summary: "watch lists", positionals: [Positional("LIST", repeats: true)],
                        options: [.value("--count", "N", "changes")]),
        ])

    func message(_ arguments: [String], _ spec: CommandSpec) -> String? {
        do throws(UsageError) {
            _ = try CommandLineParser.parse(arguments, spec)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func flagsValuesAndRepeatedValues() throws {
        let parsed = try CommandLineParser.parse(["--port", "7", "--verbose", "--list", "a", "--list=b", "--port=8"], Self.server)
        #expect(parsed.flag("--verbose") && !parsed.helpRequested)
        #expect(try parsed.integer("--port", UInt16.self) == 8, "the last value counts")
        #expect(parsed.strings("--list") == ["a", "b"])
        #expect(parsed.string("--missing") == nil && !parsed.has("--missing"))
    }

    @Test func subcommandsPositionalsAndGlobalOptionsAnywhere() throws {
        let before = try CommandLineParser.parse(["--server", "h:1", "show", "3", "--limit", "5", "--json"], Self.tool)
        #expect(before.subcommand?.name == "show" && before.positionals == ["3"])
        #expect(before.string("--server") == "h:1" && before.flag("--json") && before.string("--limit") == "5")
        let optionFirst = try CommandLineParser.parse(["--limit", "5", "show", "3"], Self.tool)
        #expect(optionFirst.subcommand?.name == "show" && optionFirst.string("--limit") == "5")
        let variadic = try CommandLineParser.parse(["watch"], Self.tool)
        #expect(variadic.positionals.isEmpty)
        let dashes = try CommandLineParser.parse(["show", "--", "--limit"], Self.tool)
        #expect(dashes.positionals == ["--limit"])
        let negative = try CommandLineParser.parse(["show", "-5"], Self.tool)
        #expect(negative.positionals == ["-5"])
    }

    @Test(arguments: [
        (["--bogus"], "unknown option --bogus"),
        (["--port"], "option --port needs a value"),
        (["--verbose=1"], "option --verbose takes no value"),
        (["extra"], "unexpected argument 'extra'"),
    ] as [([String], String)])
    func badServerCommandLines(arguments: [String], expected: String) {
        #expect(message(arguments, Self.server) == expected)
    }

    @Test(arguments: [
        ([], "missing command"),
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["show"], "missing argument LIST"),
        (["show", "1", "2"], "unexpected argument '2' (quote an argument with spaces)"),
        (["show", "1", "--count", "2"], "command 'show' has no option --count"),
        (["--count", "2", "show", "1"], "command 'show' has no option --count"),
        (["show", "1", "--typo"], "unknown option --typo"),
    ] as [([String], String)])
    func badToolCommandLines(arguments: [String], expected: String) {
        #expect(message(arguments, Self.tool) == expected)
    }

    @Test func aUsageErrorCarriesTheUsageOfItsCommand() {
        do throws(UsageError) {
            _ = try CommandLineParser.parse(["show"], Self.tool)
            Issue.record("no usage error")
        } catch {
            #expect(error.usage.hasPrefix("usage: tool [global options] show LIST [--limit N]"))
            #expect(error.usage.hasSuffix("Run 'tool show --help' for details."))
        }
    }

    /// Help wins over anything else wrong, and is the subcommand's when one is named.
    @Test(arguments: [["--help"], ["-h"], ["--port", "--help"], ["--bogus", "-h"], ["help"]])
    func helpIsAskedForAnywhere(arguments: [String]) throws {
        #expect(try CommandLineParser.parse(arguments, Self.server).helpRequested)
    }

    @Test func helpOfASubcommand() throws {
        for arguments in [["show", "--help"], ["help", "show"], ["--help", "show", "1", "2", "--typo"]] {
            let parsed = try CommandLineParser.parse(arguments, Self.tool)
            #expect(parsed.helpRequested && parsed.subcommand?.name == "show", "\(arguments)")
        }
        let top = try CommandLineParser.parse(["help"], Self.tool)
        #expect(top.helpRequested && top.subcommand == nil)
        #expect(message(["help", "frobnicate"], Self.tool) == "unknown command 'frobnicate'")
        #expect(try !CommandLineParser.parse(["show", "--", "--help"], Self.tool).helpRequested)
    }

    /// The help lists every option the command accepts, and the subcommands.
    @Test func helpListsEveryOption() {
        let serverHelp = HelpText.help(Self.server, nil)
        for text in ["usage: server [--port PORT] [--verbose] [--list LIST]", "--port PORT", "--verbose", "--list LIST", "-h, --help"] {
            #expect(serverHelp.contains(text), "\(text)")
        }
        let toolHelp = HelpText.help(Self.tool, nil)
        for text in ["Commands:", "  show", "  watch", "help [COMMAND]", "--server HOST:PORT", "--json"] {
            #expect(toolHelp.contains(text), "\(text)")
        }
        let showHelp = HelpText.help(Self.tool, Self.tool.subcommand(named: "show"))
        for text in ["usage: tool [global options] show LIST [--limit N]", "--limit N", "Global options:", "--server HOST:PORT"] {
            #expect(showHelp.contains(text), "\(text)")
        }
        #expect(!showHelp.contains("--count"))
    }
}

/// The value readers: numbers, seconds, sizes, choices, HOST:PORT.
@Suite(.timeLimit(.minutes(10)))
struct ValueParserTests {
    func message(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return (error as? UsageError)?.message ?? "not a UsageError: \(error)"
        }
    }

    @Test func wholeNumbers() throws {
        #expect(try ValueParser.integer("--n", "42", min: 1) as Int == 42)
        #expect(message { _ = try ValueParser.integer("--n", "0", min: 1) as Int } == "--n: '0' is not a whole number from 1")
        #expect(message { _ = try ValueParser.integer("--port", "70000") as UInt16 } == "--port: '70000' is not a whole number from 0 to 65535")
        #expect(message { _ = try ValueParser.integer("--n", "x") as Int } == "--n: 'x' is not a whole number from 0")
        #expect(message { _ = try ValueParser.integer("--n", "11", max: 10) as Int } == "--n: '11' is not a whole number from 0 to 10")
    }

    @Test func secondsAndDurations() throws {
        #expect(try ValueParser.seconds("--t", "1.5") == 1.5)
        #expect(ValueParser.duration(0.0001) == .milliseconds(1))
        #expect(message { _ = try ValueParser.seconds("--t", "-1") } == "--t: '-1' is not a number of seconds")
        #expect(message { _ = try ValueParser.seconds("--t", "0", positive: true) } == "--t: '0' is not a number of seconds above 0")
        #expect(message { _ = try ValueParser.positiveNumber("--s", "0") } == "--s: '0' is not a positive number")
    }

    @Test(arguments: [("67108864", 64 << 20), ("64MB", 64 << 20), ("64MiB", 64 << 20), ("2GB", 2 << 30),
                      ("512kb", 512 << 10), ("100B", 100)])
    func sizes(text: String, bytes: Int) throws {
        #expect(try ValueParser.bytes("--b", text) == bytes)
    }

    @Test(arguments: ["64XB", "MB", "-5", "99999999999999999999GB", "½MB"])
    func badSizes(text: String) {
        #expect(message { _ = try ValueParser.bytes("--b", text) } == "--b: '\(text)' is not a size (e.g. 67108864, 64MB, 2GB)")
    }

    @Test func choicesAndAddresses() throws {
        #expect(try ValueParser.choice("--f", "no", ["always", "everysec", "no"]) == "no")
        #expect(message { _ = try ValueParser.choice("--f", "x", ["always", "everysec", "no"]) } == "--f: 'x' is not always, everysec or no")
        #expect(message { _ = try ValueParser.bytes("--b", "0", min: 1) } == "--b: '0' is less than 1 bytes")
        #expect(try ValueParser.hostPort("--s", "[::1]:9") == HostPort(host: "::1", port: 9))
        #expect(try ValueParser.hostPort("--s", "h:1").description == "h:1")
        for bad in ["h", "h:", ":1", "h:70000", "::1:9", "h:+1"] {
            #expect(message { _ = try ValueParser.hostPort("--s", bad) } != nil, "\(bad)")
        }
    }

    @Test func theReadersOfAParsedCommandLineNameTheOption() throws {
        let spec = CommandSpec(name: "t", options: [.value("--port", "PORT", ""), .value("--size", "SIZE", "")])
        let parsed = try CommandLineParser.parse(["--port", "x", "--size", "1GB"], spec)
        #expect(try parsed.bytes("--size") == 1 << 30)
        do throws(UsageError) {
            _ = try parsed.integer("--port", UInt16.self)
            Issue.record("no usage error")
        } catch {
            #expect(error.message == "--port: 'x' is not a whole number from 0 to 65535")
            #expect(error.usage.hasPrefix("usage: t [--port PORT] [--size SIZE]"))
        }
    }
}
