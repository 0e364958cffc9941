import ChecklistClient
import ChecklistConformance
import ChecklistModel
import ChecklistWire
import ChecklistTesting
import Foundation
import Testing

/// `checklistd --tokens` end to end: namespaces chosen by the HELLO token,
/// no way across them, SIGHUP reloads, and the startup rules.
@Suite(.timeLimit(.minutes(10))) struct AccessControlTests {
    /// The wire code of the server error `body` fails with, or nil.
    func wireCode(_ body: () async throws -> Void) async -> ChecklistError.Code? {
        await clientError(body)?.wireCode
    }

    /// The `ClientError` `body` fails with, or nil.
    func clientError(_ body: () async throws -> Void) async -> ClientError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? ClientError
        }
    }

    @Test func namespacesAreIsolatedIdsIncluded() async throws {
        let server = try TokenServer.start()
        defer { server.stop() }
        let alice = try await server.connect(token: TokenServer.alice)
        let bob = try await server.connect(token: TokenServer.bob)
        let groceries = try await alice.createList(name: "Groceries", icon: "Groceries")
        _ = try await alice.patch(groceries.id, ops: [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "Milk"))])
        let diary = try await bob.createList(name: "Diary", icon: "Inbox")

        #expect(try await alice.lists().map(\.name) == ["Groceries"])
        #expect(try await bob.lists().map(\.name) == ["Diary"])
        // Guessing another namespace's ids answers exactly like a missing list.
        for id in [groceries.id, ListID(groceries.id.rawValue + 100)] {
            #expect(await wireCode { _ = try await bob.page(id, limit: 10, filter: .all) } == .notFound)
            #expect(await wireCode { _ = try await bob.updateList(id, name: "Mine now") } == .notFound)
            #expect(await wireCode { _ = try await bob.patch(id, ops: [.delete(.id(ItemID(1)))]) } == .notFound)
            #expect(await wireCode { _ = try await bob.deleteList(id) } == .notFound)
        }
        #expect(await wireCode { _ = try await alice.deleteList(diary.id) } == .notFound)
        let page = try await alice.page(groceries.id, limit: 10, filter: .all)
        #expect(page.items.map(\.text) == ["Milk"] && page.revision == 2)
        await alice.close()
        await bob.close()
    }

    /// A subscriber to every list of its namespace hears of its own
    /// namespace's changes and of nobody else's.
    @Test func pushesNeverCrossNamespaces() async throws {
        let server = try TokenServer.start()
        defer { server.stop() }
        let port = server.port
        try await BlockingWork.run(throttled: true) {
            func connect(_ token: String) throws -> FrameSocket {
                let c = try FrameSocket(host: "127.0.0.1", port: port, timeout: .seconds(10))
                try c.handshake(token: token)
                return c
            }
            let watcher = try connect(TokenServer.bob)
            try watcher.send(.subscribe(Subscribe(allLists: true, entries: [])), id: 2)
            _ = try watcher.receive(2, "SUBSCRIBED") { m -> Bool? in
                if case .subscribed = m { return true }
                return nil
            }
            let alice = try connect(TokenServer.alice)
            try alice.send(.createList(CreateList(name: "Alice's secret", icon: "Inbox")), id: 3)
            let secret = try alice.receive(3, "LIST") { m -> ListID? in
                if case .listCreated(let info) = m { return info.summary.id }
                return nil
            }
            try alice.send(.patch(Patch(list: secret, ops: [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "x"))])), id: 4)
            _ = try alice.receive()
            // Bob's own change, after alice's: its push must be the first bob hears.
            let bob = try connect(TokenServer.bob)
            try bob.send(.createList(CreateList(name: "Bob's", icon: "Inbox")), id: 5)
            let own = try bob.receive(5, "LIST") { m -> ListID? in
                if case .listCreated(let info) = m { return info.summary.id }
                return nil
            }
            let pushed = try watcher.receive(0, "CHANGE push") { m -> ListID? in
                if case .changePush(let p) = m { return p.change.list }
                return nil
            }
            guard pushed == own else { throw TestFailure("bob was pushed a change of list \(pushed), not \(own)") }
            try watcher.expectAlive()
        }
    }

    @Test func missingOrUnknownTokensFailToConnect() async throws {
        let server = try TokenServer.start()
        defer { server.stop() }
        for token in [nil, "", "alice", TokenServer.alice + "x", String(TokenServer.alice.dropLast())] as [String?] {
            #expect(await wireCode { _ = try await server.connect(token: token) } == .notAuthenticated, "\(String(describing: token))")
        }
        let alice = try await server.connect(token: TokenServer.alice)
        _ = try await alice.ping()
        await alice.close()
    }

    @Test func sighupReloadsTokensAndRevokesRemovedOnes() async throws {
        let server = try TokenServer.start()
        defer { server.stop() }
        let alice = try await server.connect(token: TokenServer.alice)
        let bob = try await server.connect(token: TokenServer.bob)
        _ = try await alice.createList(name: "Stays", icon: "Inbox")

        // Bob's token is removed, carol's added; alice's stays.
        let carolToken = "carol-0d9e8f7a6b5c4d3e2f1a"
        try await BlockingWork.run(throttled: true) {
            let silentBob = try FrameSocket(host: "127.0.0.1", port: server.port, timeout: .seconds(10))
            try silentBob.handshake(token: TokenServer.bob)
            try server.reload("\(TokenServer.alice) alice\n\(carolToken) carol\n")
            // A revoked connection that sends nothing is told and closed by the server on its own ...
            try silentBob.expectError(0, .notAuthenticated)
            try silentBob.expectClosed()
        }
        // ... and one that sends a request gets NOT_AUTHENTICATED (unless that close came first).
        let refused = await clientError { _ = try await bob.lists() }
        #expect(refused?.wireCode == .notAuthenticated || refused?.code == .connectionClosed, "\(String(describing: refused))")
        #expect(await clientError { _ = try await bob.ping() }?.code == .connectionClosed, "the revoked connection is closed")
        #expect(try await alice.lists().map(\.name) == ["Stays"])
        #expect(await wireCode { _ = try await server.connect(token: TokenServer.bob) } == .notAuthenticated)
        let carol = try await server.connect(token: carolToken)
        #expect(try await carol.lists().isEmpty)

        // A file that does not parse keeps the tokens in use.
        try await BlockingWork.run(throttled: true) { try server.reload("this line has three words\n", expecting: "cannot reload") }
        #expect(!server.process.standardError.contains("three words"), "the log must not echo the file")
        _ = try await carol.ping()
        let carolAgain = try await server.connect(token: carolToken)
        await carolAgain.close()

        // Moving alice's token to another namespace revokes her connection too.
        try await BlockingWork.run(throttled: true) { try server.reload("\(TokenServer.alice) mallory\n") }
        let moved = await clientError { _ = try await alice.lists() }
        #expect(moved?.wireCode == .notAuthenticated || moved?.code == .connectionClosed, "\(String(describing: moved))")
        let mallory = try await server.connect(token: TokenServer.alice)
        #expect(try await mallory.lists().isEmpty)
        for connection in [alice, bob, carol, mallory] { await connection.close() }
    }

    @Test func withoutTokensEveryoneSharesTheDefaultNamespaceAndIsTold() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        #expect(server.process.waitForStandardError(containing: "WITHOUT access control", timeout: .seconds(10)))
        let plain = try await server.connect()
        _ = try await plain.createList(name: "Shared", icon: "Inbox")
        // A token is accepted and ignored: same namespace.
        let withToken = try await ChecklistConnection.connect(host: "127.0.0.1", port: server.port,
                                                              clientName: "t", token: "whatever")
        #expect(try await withToken.lists().map(\.name) == ["Shared"])
        await plain.close()
        await withToken.close()
    }

    @Test func startupSaysWhichAccessControlRuns() throws {
        let server = try TokenServer.start()
        defer { server.stop() }
        #expect(server.process.waitForStandardError(containing: "access control: 2 tokens for 2 namespaces",
                                                    timeout: .seconds(10)))
        #expect(!server.process.standardError.contains(TokenServer.alice))
    }

    @Test(arguments: [["--host", "0.0.0.0"], ["--host", "::"], ["--host", "10.1.2.3", "--tokens", "/nonexistent/tokens"]])
    func refusesToStartUnsafely(arguments: [String]) throws {
        let data = try TemporaryDirectory(prefix: "checklistd-refuse")
        let result = try ProcessRunner.run(executable: try ProductLocator.path(of: "checklistd"),
                                           arguments: arguments + ["--port", "0", "--data-dir", data.path],
                                           timeout: .seconds(30))
        #expect(result.status != 0)
        #expect(!result.stdout.contains("listening on"))
        if arguments.contains("--tokens") {
            #expect(result.stderr.contains("cannot read /nonexistent/tokens"))
        } else {
            #expect(result.stderr.contains("--insecure-bind"))
        }
    }

    @Test func aBadTokensFileIsRefusedAtStartNamingTheLine() throws {
        let directory = try TemporaryDirectory(prefix: "checklistd-badtokens")
        let path = directory.appending("tokens")
        try TokenServer.write("good-token-1 alice\ngood-token-1 bob\n", to: path)
        let result = try ProcessRunner.run(executable: try ProductLocator.path(of: "checklistd"),
                                           arguments: ["--port", "0", "--data-dir", directory.appending("data"), "--tokens", path],
                                           timeout: .seconds(30))
        #expect(result.status != 0)
        #expect(result.stderr.contains("line 2"))
        #expect(!result.stderr.contains("good-token-1"))
    }

    @Test func cliTakesTheTokenFromTheOptionOrTheEnvironment() throws {
        let server = try TokenServer.start()
        defer { server.stop() }
        let checklist = try ProductLocator.path(of: "checklist")
        func run(_ arguments: [String], token: String? = nil) throws -> ProcessRunner.Result {
            var environment = ProcessInfo.processInfo.environment
            environment["CHECKLIST_TOKEN"] = token
            return try ProcessRunner.run(executable: checklist, arguments: ["--server", "127.0.0.1:\(server.port)"] + arguments,
                                         environment: environment, timeout: .seconds(30))
        }
        let created = try run(["create", "From the environment"], token: TokenServer.alice)
        #expect(created.status == 0, "\(created.stderr)")
        let mine = try run(["--json", "lists", "--token", TokenServer.alice])
        #expect(mine.status == 0 && mine.stdout.contains("From the environment"))
        let theirs = try run(["--json", "lists"], token: TokenServer.bob)
        #expect(theirs.status == 0 && !theirs.stdout.contains("From the environment"))
        // The option wins over the environment.
        let option = try run(["--token", TokenServer.bob, "--json", "lists"], token: TokenServer.alice)
        #expect(option.status == 0 && !option.stdout.contains("From the environment"))
        let none = try run(["lists"])
        #expect(none.status == 1 && none.stderr.contains("NOT_AUTHENTICATED"))
    }
}
