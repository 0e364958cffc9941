import ChecklistConformance
import ChecklistTesting
import Foundation
import Testing

/// Every row of the bad-input catalogue (Protocol/SPEC.md section 8)
/// against the real server, from the same `ChecklistConformance` cases that
/// `checklist-conformance` runs, so the two cannot drift. Each case runs on
/// a fresh server with access control (so the access rows run too); the
/// runner checks the exact answer and connection outcome, then that a
/// second connection still works and that LIST_LISTS and every page read
/// the same as before the input.
@Suite(.timeLimit(.minutes(10))) struct BadInputTests {
    @Test(arguments: Catalogue.badInputs.map(\.id))
    func badInput(_ id: String) async throws {
        try await runCase(id)
    }

    @Test(arguments: Catalogue.all.filter { !$0.isBadInput }.map(\.id))
    func happyPath(_ id: String) async throws {
        try await runCase(id)
    }

    /// Starts a server with access control, runs the case against it and
    /// checks that the server is still running afterwards. All of it is
    /// blocking socket work, so it runs off the cooperative pool.
    private func runCase(_ id: String) async throws {
        let testCase = try #require(Catalogue.named(id))
        let (result, serverAlive) = try await BlockingWork.run(throttled: true) { () throws -> (ConformanceRunner.Result, Bool) in
            let server = try TokenServer.start()
            defer { server.stop() }
            let result = ConformanceRunner.run(testCase, against: server.target)
            return (result, server.process.exitStatus == nil)
        }
        #expect(result.status == .passed, "\(result.line)")
        #expect(serverAlive, "the server exited")
    }

    /// The catalogue in SPEC.md is exactly the one the cases carry.
    @Test func specTableMatchesTheCatalogue() throws {
        let spec = try String(contentsOfFile: Self.repositoryFile("Protocol/SPEC.md"), encoding: .utf8)
        let table = CatalogueTable.markdown(Catalogue.badInputs)
        #expect(spec.contains(table), "regenerate the table with `checklist-conformance --markdown`")
        #expect(Catalogue.badInputs.count >= 30)
        #expect(Set(Catalogue.all.map(\.id)).count == Catalogue.all.count, "case ids are unique")
    }

    /// The inputs issue 7 asks the catalogue to cover, each by at least one case.
    @Test func catalogueCoversTheRequiredInputs() {
        let required = [
            "truncated-header", "length-over-limit", "length-below-header", "unknown-type", "bad-flags",
            "invalid-utf8", "name-too-long", "item-text-too-long", "max-varint-id", "varint-11-bytes",
            "offset-past-end", "limit-zero", "limit-over-max", "unknown-list-page", "unknown-item",
            "move-past-end", "empty-batch", "batch-over-limit", "temp-ref-before-definition",
            "request-before-hello", "second-hello", "pipelined-flood", "one-byte-writes", "idle-after-hello",
            "reset-mid-frame", "wrong-token", "other-namespace", "import-truncated", "import-bad-checksum",
            "import-decompression-bomb", "import-not-gzip",
        ]
        let ids = Set(Catalogue.badInputs.map(\.id))
        #expect(Set(required).subtracting(ids).isEmpty, "missing: \(Set(required).subtracting(ids).sorted())")
    }

    static func repositoryFile(_ relative: String) -> String {
        // Tests/IntegrationTests/BadInputTests.swift → the package root.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(relative).path
    }
}
