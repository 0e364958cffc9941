import ChecklistConformance
import ChecklistModel
import ChecklistWire
import ChecklistTesting
import Testing

/// `checklist-conformance` as a user runs it, against the real server.
@Suite(.timeLimit(.minutes(10))) struct ConformanceRunnerTests {
    func runner(_ arguments: [String]) async throws -> ProcessRunner.Result {
        let executable = try ProductLocator.path(of: "checklist-conformance")
        return try await BlockingWork.run(throttled: true) {
            try ProcessRunner.run(executable: executable, arguments: arguments, timeout: .seconds(240))
        }
    }

    @Test func everyCasePassesAgainstAServerWithAccessControl() async throws {
        let server = try TokenServer.start()
        defer { server.stop() }
        let result = try await runner(["127.0.0.1:\(server.port)", "--token", TokenServer.alice,
                                 "--second-token", TokenServer.bob, "--idle", "1"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("\(Catalogue.all.count) passed, 0 failed, 0 skipped"), "\(result.stdout)")
        for testCase in Catalogue.all {
            #expect(result.stdout.contains("PASS \(testCase.id):"), "\(testCase.id)")
        }
    }

    @Test(arguments: TestStore.available)
    func withoutAccessControlTheAccessCasesAreSkipped(store: TestStore) async throws {
        let server = try TestServer.start(store: store)
        defer { server.stop() }
        let result = try await runner(["127.0.0.1:\(server.port)", "--idle", "0.5"])
        let skipped = Catalogue.all.filter { $0.requirement != .none }.count
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("\(Catalogue.all.count - skipped) passed, 0 failed, \(skipped) skipped"))
    }

    @Test func failuresMakeTheExitStatusNonZero() async throws {
        let server = try TokenServer.start()
        defer { server.stop() }
        let result = try await runner(["127.0.0.1:\(server.port)", "--token", "not-a-token", "--only", "bad-flags,unknown-type"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("FAIL bad-flags") && result.stdout.contains("NOT_AUTHENTICATED"))
    }

    @Test func markdownIsTheCatalogue() async throws {
        let result = try await runner(["--markdown"])
        #expect(result.status == 0)
        #expect(result.stdout.contains(CatalogueTable.markdown(Catalogue.badInputs)))
    }
}

/// The runner's own checks catch what they are there for.
@Suite(.timeLimit(.minutes(10))) struct ConformanceRunnerSelfTests {
    @Test func aCaseThatChangesDataFails() async throws {
        let server = try TokenServer.start()
        defer { server.stop() }
        let sneaky = ConformanceCase("sneaky", .store, "a valid TOGGLE", .answer("PATCH_OK")) { ctx in
            let c = try ctx.connectReady()
            try c.send(.patch(Patch(list: ctx.fixture.list, ops: [.toggle(.id(ctx.fixture.items[0]))])), id: 5)
            _ = try c.receive()
        }
        let target = server.target
        let result = try await BlockingWork.run(throttled: true) { ConformanceRunner.run(sneaky, against: target) }
        #expect(result.status == .failed && (result.detail ?? "").contains("the stored data changed"), "\(result.line)")
    }

    @Test func aWrongExpectationFails() async throws {
        let server = try TokenServer.start()
        defer { server.stop() }
        let wrong = ConformanceCase("wrong", .encoding, "bad flags, expecting the wrong field", .error(.badField, "body")) { ctx in
            let c = try ctx.connectReady()
            try c.send(FrameBytes.frame(type: MessageType.ping.rawValue, flags: 0x02, id: 9, body: [0]))
            try ctx.expectOutcome(on: c, requestID: 9)
        }
        let target = server.target
        let result = try await BlockingWork.run(throttled: true) { ConformanceRunner.run(wrong, against: target) }
        #expect(result.status == .failed && (result.detail ?? "").contains("field flags"), "\(result.line)")
    }
}
