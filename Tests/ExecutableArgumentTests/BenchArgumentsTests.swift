@testable import checklist_bench
import ChecklistClient
import Testing

/// `checklist-bench`'s `--key value` / `--flag` parser and its checks.
@Suite(.timeLimit(.minutes(10)))
struct BenchArgumentsTests {
    @Test func valuesFlagsAndDefaults() throws {
        let args = try BenchArguments(["--items", "500", "--json", "--seconds", "2.5", "--server", "h:1"], flagNames: ["json"])
        #expect(args.flag("json") && !args.flag("other"))
        #expect(try args.int("items", default: 1, min: 1) == 500)
        #expect(try args.int("connections", default: 50) == 50)
        #expect(try args.double("seconds", default: 10) == 2.5)
        #expect(args.string("server") == "h:1" && args.string("pattern") == nil)
        try args.check(allowed: ["items", "json", "seconds", "server"])
    }

    /// `--help` after a scenario asks for the usage (it was taken for an
    /// option missing its value), wherever it stands.
    @Test func helpIsAskedForAnywhere() {
        for arguments: ArraySlice<String> in [["--help"], ["--items", "5", "-h"], ["--seconds", "2", "--help", "--json"]] {
            #expect(throws: BenchArguments.HelpRequested.self) { _ = try BenchArguments(arguments, flagNames: ["json"]) }
        }
    }

    @Test func badArgumentsAreUsageErrors() throws {
        func message(_ body: () throws -> Void) -> String? {
            do { try body(); return nil } catch { return (error as? BenchArguments.UsageError)?.description }
        }
        #expect(message { _ = try BenchArguments(["items"], flagNames: []) } == "unexpected argument 'items'")
        #expect(message { _ = try BenchArguments(["--items"], flagNames: []) } == "--items needs a value")
        let args = try BenchArguments(["--items", "0", "--seconds", "-1", "--typo", "x"], flagNames: [])
        #expect(message { _ = try args.int("items", default: 1, min: 1) } == "--items: '0' is not a whole number >= 1")
        #expect(message { _ = try args.double("seconds", default: 1) } == "--seconds: '-1' is not a positive number")
        #expect(message { try args.check(allowed: ["items", "seconds"]) } == "unknown option --typo")
    }
}

/// `checklist-bench`'s TLS options (no environment variables).
@Suite(.timeLimit(.minutes(10)))
struct BenchTLSArgumentsTests {
    func message(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch { return (error as? BenchArguments.UsageError)?.description }
    }

    @Test func theTLSOptions() throws {
        let none = try BenchArguments(["--items", "5"], flagNames: ["json", "tls"])
        #expect(!none.usesTLS)
        #expect(try none.tlsOptions().configuration() == nil)
        let flag = try BenchArguments(["--tls"], flagNames: ["json", "tls"])
        #expect(flag.usesTLS)
        #expect(try flag.tlsOptions().configuration() == TLSClientConfiguration())
        let all = try BenchArguments(["--tls-ca", "ca.pem", "--tls-server-name", "n.example", "--tls-cert", "c.pem",
                                      "--tls-key", "k.pem"], flagNames: ["json", "tls"])
        #expect(all.usesTLS)
        #expect(try all.tlsOptions().configuration() == TLSClientConfiguration(caFile: "ca.pem", serverName: "n.example",
                                                                              certificateFile: "c.pem", privateKeyFile: "k.pem"))
        try all.check(allowed: BenchArguments.tlsOptionNames)
        #expect(BenchArguments.tlsOptionNames == ["tls", "tls-ca", "tls-server-name", "tls-cert", "tls-key"])
    }

    @Test func badTLSArgumentsAreUsageErrors() throws {
        let half = try BenchArguments(["--tls-cert", "c.pem"], flagNames: ["tls"])
        #expect(message { _ = try half.tlsOptions() } == "--tls-cert needs --tls-key (the client certificate's private key)")
        // codec has no server: it rejects the options as unknown; load takes them.
        let codec = try BenchArguments(["--tls"], flagNames: ["json", "tls"])
        #expect(message { try codec.check(allowed: CodecScenario.options) } == "unknown option --tls")
        #expect(message { _ = try LoadScenario.Settings(codec) } == nil)
        // The bench's own server gets throwaway certificates: the other options need --server.
        let ownServer = try BenchArguments(["--tls-ca", "ca.pem"], flagNames: ["tls"])
        #expect(message { _ = try BenchTarget(ownServer) }?.hasPrefix("--tls-ca, --tls-server-name, --tls-cert and --tls-key need --server") == true)
    }

    @Test func severalServersAndTheFailoverScenario() async throws {
        func message(_ body: () async throws -> Void) async -> String? {
            do { try await body(); return nil } catch { return (error as? BenchArguments.UsageError)?.description }
        }
        let two = try BenchArguments(["--server", "127.0.0.1:7420, [::1]:7421"], flagNames: [])
        let target = try BenchTarget(two)
        #expect(target.servers == [ServerAddress(host: "127.0.0.1", port: 7420), ServerAddress(host: "::1", port: 7421)])
        #expect(target.host == "127.0.0.1" && target.port == 7420)
        let bad = try BenchArguments(["--server", "127.0.0.1:7420,"], flagNames: [])
        #expect(await message { _ = try BenchTarget(bad) } == "--server wants HOST:PORT[,HOST:PORT...], got '127.0.0.1:7420,'")
        // load aims only at this machine, every server of the list.
        let remote = try BenchArguments(["--server", "127.0.0.1:1,10.0.0.1:2"], flagNames: [])
        #expect(await message { _ = try LoadScenario.Settings(remote) } == "load only targets loopback addresses (127.0.0.0/8, ::1), not 10.0.0.1")
        // failover starts its own two nodes on one database; it checks its options first.
        let zero = try BenchArguments(["--clients", "0"], flagNames: ["json"])
        #expect(await message { try await FailoverScenario.run(zero) } == "--clients: '0' is not a whole number >= 1")
        let typo = try BenchArguments(["--postgres", "dbname=x", "--server", "h:1"], flagNames: ["json"])
        #expect(await message { try await FailoverScenario.run(typo) } == "unknown option --server")
    }
}
