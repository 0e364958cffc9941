@testable import checklist
@testable import checklist_bench
@testable import checklist_conformance
@testable import checklist_faults
@testable import checklist_postgres_bench
@testable import checklistd
import ChecklistCommandLine
import Testing

/// `--help` on every command and scenario of every executable: it is
/// asked for wherever it stands, and its text lists every option the
/// command accepts (the parser and the help read the same specs).
@Suite(.timeLimit(.minutes(10)))
struct HelpOfEveryCommandTests {
    static let tops: [CommandSpec] = [checklistd.Options.command, Commands.top, BenchCommand.top, Arguments.command,
                                      FaultsCommand.top, checklist_postgres_bench.Options.command]

    @Test(arguments: tops.map(\.name))
    func everyCommandHasATruthfulHelp(name: String) throws {
        let top = try #require(Self.tops.first { $0.name == name })
        let commands: [CommandSpec?] = [nil] + top.subcommands
        for subcommand in commands {
            let prefix = subcommand.map { [$0.name] } ?? []
            for arguments in [prefix + ["--help"], prefix + ["-h"], prefix + ["--bogus", "--help"]] {
                let parsed = try CommandLineParser.parse(arguments, top)
                #expect(parsed.helpRequested && parsed.subcommand?.name == subcommand?.name, "\(name) \(arguments)")
            }
            let help = HelpText.help(top, subcommand)
            let command = subcommand ?? top
            #expect(help.hasPrefix("usage: \(top.name)"))
            for option in command.options + top.globalOptions {
                #expect(help.contains("  " + option.synopsis), "\(name) \(command.name): \(option.name) is not in its help")
            }
            for other in top.subcommands where subcommand == nil {
                #expect(help.contains("  " + other.name), "\(name): \(other.name) is not in the help")
            }
        }
    }

    /// Each executable refuses an unknown option with its usage.
    @Test(arguments: tops.map(\.name))
    func anUnknownOptionIsAUsageError(name: String) throws {
        let top = try #require(Self.tops.first { $0.name == name })
        let prefix = top.subcommands.first.map { [$0.name] } ?? []
        do throws(UsageError) {
            _ = try CommandLineParser.parse(prefix + ["--no-such-option"], top)
            Issue.record("\(name) took --no-such-option")
        } catch {
            #expect(error.message == "unknown option --no-such-option")
            #expect(error.usage.hasPrefix("usage: \(top.name)"))
        }
    }

    @Test func theBenchAnswersHelpAfterAScenario() throws {
        // It used to answer "--help needs a value".
        let parsed = try CommandLineParser.parse(["pages", "--help"], BenchCommand.top)
        #expect(parsed.helpRequested && parsed.helpText.contains("--executor reader|pool"))
    }
}
