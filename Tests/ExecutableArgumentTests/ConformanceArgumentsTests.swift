@testable import checklist_conformance
import ChecklistClient
import ChecklistCommandLine
import Testing

/// `checklist-conformance`'s command line (`Arguments`), parsed without
/// running anything.
@Suite(.timeLimit(.minutes(10)))
struct ConformanceArgumentsTests {
    @Test func aServerAndItsOptions() throws {
        let a = try Arguments(["127.0.0.1:7420", "--token", "t", "--second-token", "u", "--idle", "0.5",
                               "--timeout", "3", "--only", "ping-too-long,second-hello"], environmentToken: nil)
        #expect(a.action == .run(host: "127.0.0.1", port: 7420) && a.address == "127.0.0.1:7420")
        #expect(a.token == "t" && a.secondToken == "u")
        #expect(a.idle == .milliseconds(500) && a.timeout == .seconds(3))
        #expect(a.only == ["ping-too-long", "second-hello"])
    }

    @Test func anIPv6HostLosesItsBrackets() throws {
        let a = try Arguments(["[::1]:9"], environmentToken: nil)
        #expect(a.action == .run(host: "::1", port: 9))
        #expect(a.idle == .seconds(2) && a.timeout == .seconds(10) && a.only == nil)
    }

    @Test func theEnvironmentTokenIsTheDefault() throws {
        #expect(try Arguments(["h:1"], environmentToken: "env").token == "env")
        #expect(try Arguments(["h:1"], environmentToken: "").token == nil)
        #expect(try Arguments(["h:1", "--token", "flag"], environmentToken: "env").token == "flag")
    }

    @Test func printingActionsNeedNoServer() throws {
        #expect(try Arguments(["--list"], environmentToken: nil).action == .list)
        #expect(try Arguments(["--markdown"], environmentToken: nil).action == .markdown)
        #expect(try Arguments(["h:1", "--help", "--bogus"], environmentToken: nil).action == .help)
        #expect(try Arguments(["-h"], environmentToken: nil).action == .help)
    }

    @Test(arguments: [
        ([], "missing argument HOST:PORT"),
        (["localhost"], "the server: 'localhost' is not HOST:PORT (e.g. 127.0.0.1:7420 or [::1]:7420)"),
        (["h:99999"], "the server: 'h:99999' is not HOST:PORT (e.g. 127.0.0.1:7420 or [::1]:7420)"),
        (["h:1", "h:2"], "unexpected argument 'h:2' (quote an argument with spaces)"),
        (["h:1", "--fast"], "unknown option --fast"),
        (["h:1", "--token"], "option --token needs a value"),
        (["h:1", "--idle", "-1"], "--idle: '-1' is not a number of seconds"),
    ] as [([String], String)])
    func badCommandLinesAreUsageErrors(arguments: [String], message: String) {
        #expect(throws: UsageError(message)) {
            _ = try Arguments(arguments, environmentToken: nil)
        }
    }
}

/// `checklist-conformance`'s TLS options.
@Suite(.timeLimit(.minutes(10)))
struct ConformanceTLSArgumentsTests {
    @Test func plaintextUnlessAsked() throws {
        let a = try Arguments(["h:1"], environmentToken: nil)
        #expect(try a.tls.configuration() == nil)
    }

    @Test func everyTLSOption() throws {
        let a = try Arguments(["h:1", "--tls-ca", "ca.pem", "--tls-server-name", "n.example", "--tls-cert", "c.pem",
                               "--tls-key", "k.pem"], environmentToken: nil)
        #expect(try a.tls.configuration() == TLSClientConfiguration(caFile: "ca.pem", serverName: "n.example",
                                                                   certificateFile: "c.pem", privateKeyFile: "k.pem"))
        #expect(try Arguments(["--tls", "h:1"], environmentToken: nil).tls.configuration() == TLSClientConfiguration())
    }

    @Test func theVariablesAreDefaultsTheOptionsOverride() throws {
        let environment = ["CHECKLIST_TLS_CA": "env.pem", "CHECKLIST_TLS_SERVER_NAME": "env.example"]
        let fromEnvironment = try Arguments(["h:1"], environmentToken: nil, environment: environment)
        #expect(try fromEnvironment.tls.configuration() == TLSClientConfiguration(caFile: "env.pem", serverName: "env.example"))
        let overridden = try Arguments(["h:1", "--tls-ca", "flag.pem"], environmentToken: nil, environment: environment)
        #expect(try overridden.tls.configuration() == TLSClientConfiguration(caFile: "flag.pem", serverName: "env.example"))
    }

    @Test(arguments: [
        (["h:1", "--tls-ca"], [:], "option --tls-ca needs a value"),
        (["h:1", "--tls-cert", "c.pem"], [:], "--tls-cert needs --tls-key (the client certificate's private key)"),
        (["h:1"], ["CHECKLIST_TLS_KEY": "k.pem"], "--tls-key needs --tls-cert (the client certificate)"),
        (["h:1"], ["CHECKLIST_TLS": "on"], "CHECKLIST_TLS: 'on' is neither 1 nor 0"),
    ] as [([String], [String: String], String)])
    func badTLSCommandLinesAreUsageErrors(arguments: [String], environment: [String: String], message: String) {
        #expect(throws: UsageError(message)) {
            _ = try Arguments(arguments, environmentToken: nil, environment: environment)
        }
    }
}
