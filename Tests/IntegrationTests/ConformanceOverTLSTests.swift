import ChecklistClient
import ChecklistConformance
import ChecklistTesting
import Testing

/// The conformance catalogue against `checklistd --tls-cert`: the runner
/// speaks plaintext frames, so it goes through an in-process TLS relay
/// (`TLSTerminator.originating`), and every case's connections are TLS
/// connections to the server.
@Suite(.timeLimit(.minutes(10))) struct ConformanceOverTLSTests {
    @Test func everyCasePassesOverTLS() async throws {
        let certificates = try TestCertificates.shared()
        let server = try TokenServer.start(tokens: TokenServer.defaultTokens,
                                           ["--tls-cert", certificates.server.certificateFile,
                                            "--tls-key", certificates.server.privateKeyFile])
        defer { server.stop() }
        let relay = try TLSTerminator.originating(to: server.port, certificates.clientConfiguration())
        defer { relay.stop() }
        let target = Target(host: "127.0.0.1", port: relay.port, token: TokenServer.alice, secondToken: TokenServer.bob,
                            idle: .seconds(1))
        let results = try await BlockingWork.run(throttled: true) { ConformanceRunner.runAll(against: target) }
        #expect(results.count == Catalogue.all.count)
        for result in results where result.status != .passed {
            Issue.record("\(result.line)")
        }
        // Every case went over TLS: each made at least its setup connection through the relay.
        let client = try await ChecklistConnection.connect(host: "127.0.0.1", port: server.port, clientName: "tls-stats",
                                                           token: TokenServer.bob, tls: certificates.clientConfiguration())
        let tls = try #require(try await client.stats().tls)
        #expect(tls.handshakes > UInt64(results.count), "\(tls)")
        await client.close()
    }
}
