@testable import checklist_bench
import ChecklistClient
import ChecklistCommandLine
import Testing

/// `checklist-bench`'s scenarios on the one parser, and their checks.
@Suite(.timeLimit(.minutes(10)))
struct BenchArgumentsTests {
    func message(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch { return (error as? UsageError)?.message ?? "not a UsageError: \(error)" }
    }

    @Test func valuesFlagsAndDefaults() throws {
        let args = try BenchArguments(["--items", "500", "--json", "--seconds", "2.5", "--server", "h:1"], PagesScenario.spec)
        #expect(args.flag("json") && !args.flag("tls"))
        #expect(try args.int("items", default: 1, min: 1) == 500)
        #expect(try args.int("connections", default: 50) == 50)
        #expect(try args.double("seconds", default: 10) == 2.5)
        #expect(args.string("server") == "h:1" && args.string("pattern") == nil)
    }

    /// `--help` after a scenario asks for that scenario's help (it was
    /// taken for an option missing its value), wherever it stands.
    @Test func helpIsAskedForAnywhere() throws {
        for arguments in [["pages", "--help"], ["pages", "--items", "5", "-h"], ["pages", "--seconds", "--help", "--json"],
                          ["help", "pages"]] {
            let parsed = try CommandLineParser.parse(arguments, BenchCommand.top)
            #expect(parsed.helpRequested && parsed.subcommand?.name == "pages", "\(arguments)")
            #expect(parsed.helpText.contains("--pattern sequential|random|deep|head"))
        }
    }

    @Test func badArgumentsAreUsageErrors() throws {
        #expect(message { _ = try BenchArguments(["items"], CodecScenario.spec) } == "unexpected argument 'items'")
        #expect(message { _ = try BenchArguments(["--items"], PagesScenario.spec) } == "option --items needs a value")
        #expect(message { _ = try BenchArguments(["--typo", "x"], PagesScenario.spec) } == "unknown option --typo")
        #expect(message { _ = try BenchArguments(["--clients", "1"], PagesScenario.spec) }
                == "scenario 'pages' has no option --clients")
        #expect(message { _ = try CommandLineParser.parse(["bogus"], BenchCommand.top) } == "unknown scenario 'bogus'")
        let args = try BenchArguments(["--items", "0", "--seconds", "-1"], PagesScenario.spec)
        #expect(message { _ = try args.int("items", default: 1, min: 1) } == "--items: '0' is not a whole number from 1")
        #expect(message { _ = try args.double("seconds", default: 1) } == "--seconds: '-1' is not a positive number")
    }
}

/// `checklist-bench`'s TLS options (no environment variables).
@Suite(.timeLimit(.minutes(10)))
struct BenchTLSArgumentsTests {
    func message(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch { return (error as? UsageError)?.message ?? "not a UsageError: \(error)" }
    }

    @Test func theTLSOptions() throws {
        let none = try BenchArguments(["--items", "5"], LoadScenario.spec)
        #expect(!none.usesTLS)
        #expect(try none.tlsOptions().configuration() == nil)
        let flag = try BenchArguments(["--tls"], LoadScenario.spec)
        #expect(flag.usesTLS)
        #expect(try flag.tlsOptions().configuration() == TLSClientConfiguration())
        let all = try BenchArguments(["--tls-ca", "ca.pem", "--tls-server-name", "n.example", "--tls-cert", "c.pem",
                                      "--tls-key", "k.pem"], LoadScenario.spec)
        #expect(all.usesTLS)
        #expect(try all.tlsOptions().configuration() == TLSClientConfiguration(caFile: "ca.pem", serverName: "n.example",
                                                                              certificateFile: "c.pem", privateKeyFile: "k.pem"))
    }

    @Test func badTLSArgumentsAreUsageErrors() throws {
        let half = try BenchArguments(["--tls-cert", "c.pem"], LoadScenario.spec)
        #expect(message { _ = try half.tlsOptions() } == "--tls-cert needs --tls-key (the client certificate's private key)")
        // codec has no server: it refuses the options; load takes them.
        #expect(message { _ = try BenchArguments(["--tls"], CodecScenario.spec) } == "scenario 'codec' has no option --tls")
        #expect(message { _ = try LoadScenario.Settings(try BenchArguments(["--tls"], LoadScenario.spec)) } == nil)
        // The bench's own server gets throwaway certificates: the other options need --server.
        let ownServer = try BenchArguments(["--tls-ca", "ca.pem"], LoadScenario.spec)
        #expect(message { _ = try BenchTarget(ownServer) }?.hasPrefix("--tls-ca, --tls-server-name, --tls-cert and --tls-key need --server") == true)
    }

    @Test func severalServersAndTheFailoverScenario() async throws {
        func message(_ body: () async throws -> Void) async -> String? {
            do { try await body(); return nil } catch { return (error as? UsageError)?.message ?? "not a UsageError: \(error)" }
        }
        let two = try BenchArguments(["--server", "127.0.0.1:7420, [::1]:7421"], LoadScenario.spec)
        let target = try BenchTarget(two)
        #expect(target.servers == [ServerAddress(host: "127.0.0.1", port: 7420), ServerAddress(host: "::1", port: 7421)])
        #expect(target.host == "127.0.0.1" && target.port == 7420)
        let bad = try BenchArguments(["--server", "127.0.0.1:7420,"], LoadScenario.spec)
        #expect(await message { _ = try BenchTarget(bad) } == "--server wants HOST:PORT[,HOST:PORT...], got '127.0.0.1:7420,'")
        // load aims only at this machine, every server of the list.
        let remote = try BenchArguments(["--server", "127.0.0.1:1,10.0.0.1:2"], LoadScenario.spec)
        #expect(await message { _ = try LoadScenario.Settings(remote) } == "load only targets loopback addresses (127.0.0.0/8, ::1), not 10.0.0.1")
        // failover starts its own two nodes on one database; it checks its options first.
        let zero = try BenchArguments(["--clients", "0"], FailoverScenario.spec)
        #expect(await message { try await FailoverScenario.run(zero) } == "--clients: '0' is not a whole number from 1")
        #expect(await message { _ = try BenchArguments(["--postgres", "dbname=x", "--server", "h:1"], FailoverScenario.spec) }
                == "scenario 'failover' has no option --server")
    }
}
