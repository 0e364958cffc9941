import ChecklistClient
import ChecklistTesting
import Glibc
import Testing

/// Clients of several `checklistd --postgres` nodes on one database
/// (issue 13, "Clients that fail over"): `connect(servers:)` skips what does
/// not answer, and a `ChecklistSync` whose node dies (kill -9) or drains
/// (SIGTERM) goes on through another, its subscription without gap or
/// duplicate and its patch in flight applied once.
///
/// Until nodes follow each other's commits, node 2 is started after the
/// writes it must know of are committed through node 1.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct FailoverTests {
    static let milk: [PatchOperation] = [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "Milk"))]

    @Test func connectSkipsADeadServerAndNamesEveryServerWhenNoneAnswers() async throws {
        let server = try await TestServer.launch()
        defer { server.stopInBackground() }
        let dead = ServerAddress(host: "127.0.0.1", port: try unusedLoopbackPort())
        let live = ServerAddress(host: "127.0.0.1", port: server.port)
        let connection = try await ChecklistConnection.connect(servers: [dead, live], clientName: "failover-test")
        #expect(connection.server == live)
        #expect(try await connection.lists().isEmpty)
        await connection.close()

        let otherDead = ServerAddress(host: "127.0.0.1", port: try unusedLoopbackPort())
        do {
            _ = try await ChecklistConnection.connect(servers: [dead, otherDead], clientName: "failover-test")
            Issue.record("connected to no server")
        } catch let error as ClientError {
            #expect(error.code == .connectionFailed)
            #expect(error.message.contains("\(dead)") && error.message.contains("\(otherDead)"))
        }
    }

    @Test func theCLITriesTheServersInTurn() async throws {
        let server = try await TestServer.launch()
        defer { server.stopInBackground() }
        let dead = "127.0.0.1:\(try unusedLoopbackPort())"
        let works = try CLI(server: "\(dead),127.0.0.1:\(server.port)").run("ping")
        #expect(works.status == 0)
        let fails = try CLI(server: "\(dead),\(dead)").run("ping")
        #expect(fails.status == 3)
        #expect(fails.stderr.contains("no server of 2 could be used"))
    }

    @Test(.enabled(if: PostgresCluster.binariesFound, "no PostgreSQL binaries (Debian package postgresql): skipped"))
    func aSyncClientGoesOnThroughNode2WhenNode1IsKilled() async throws {
        let nodes = try PostgresNodes()
        let node1 = try await nodes.start()
        defer { node1.kill() }
        let writer = try await ChecklistConnection.connect(servers: [node1.serverAddress], clientName: "writer")
        let list = try await writer.createList(name: "Groceries")
        for text in ["Bread", "Eggs"] {
            _ = try await writer.patch(list.id, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: text))])
        }
        await writer.close()  // revision 3

        // Node 1's PATCH_OK to the client is held back: the patch commits, its answer never comes.
        let proxy = try AnswerCuttingProxy(upstreamPort: node1.port, holdAnswer: true)
        defer { proxy.stop() }
        let node2Port = try unusedLoopbackPort()
        let log = FailoverLog()
        let sync = ChecklistSync(servers: [ServerAddress(host: "127.0.0.1", port: proxy.port),
                                           ServerAddress(host: "127.0.0.1", port: node2Port)],
                                 clientName: "failing-over", retry: .init(initialBackoff: .milliseconds(20)),
                                 onReconnect: log.record)
        let reading = log.follow(sync.subscribe([list.id], from: [list.id: list.revision]))
        #expect(await log.waitForChange(3))

        let inFlight = Task { try await sync.patch(list.id, ops: Self.milk) }
        #expect(await proxy.waitForCut())  // committed on node 1 (revision 4), unanswered
        let node2 = try await nodes.start(port: node2Port)
        defer { node2.kill() }
        #expect(await node1.end(signal: SIGKILL) == .signaled(SIGKILL))

        let ok = try await inFlight.value
        #expect(ok.revision == 4)
        let reader = try await ChecklistConnection.connect(servers: [node2.serverAddress], clientName: "reader")
        let page = try await reader.page(list.id, limit: 10)
        #expect(page.revision == 4)
        #expect(page.items.map(\.text) == ["Bread", "Eggs", "Milk"])
        #expect(page.items.last?.id == ok.ids.first?.id)

        // Patches and the subscription go on through node 2, without gap or duplicate.
        let next = try await sync.patch(list.id, ops: [.toggle(.id(ok.ids[0].id))])
        #expect(next.revision == 5)
        #expect(sync.patchServer == node2.serverAddress)
        #expect(await log.waitForChange(5))
        #expect(log.changeRevisions == [2, 3, 4, 5])
        #expect(await log.wait { $0.reconnections.count >= 2 })
        let moves = log.reconnections
        #expect(moves.allSatisfy { $0.isFailover && $0.from.port == proxy.port && $0.to == node2.serverAddress })
        #expect(Set(moves.map(\.subscription)) == [nil, 1])
        #expect(log.events.contains { if case .interrupted = $0 { return true } else { return false } })

        await sync.close()
        reading.cancel()
        await reader.close()
    }

    @Test(.enabled(if: PostgresCluster.binariesFound, "no PostgreSQL binaries (Debian package postgresql): skipped"))
    func aSyncClientMovesOnWhenNode1DrainsOnSIGTERM() async throws {
        let nodes = try PostgresNodes()
        let node1 = try await nodes.start()
        defer { node1.kill() }
        let node2Port = try unusedLoopbackPort()
        let log = FailoverLog()
        let sync = ChecklistSync(servers: [node1.serverAddress, ServerAddress(host: "127.0.0.1", port: node2Port)],
                                 clientName: "draining", retry: .init(initialBackoff: .milliseconds(20)),
                                 onReconnect: log.record)
        let setup = try await ChecklistConnection.connect(servers: [node1.serverAddress], clientName: "setup")
        let list = try await setup.createList(name: "Groceries")
        await setup.close()
        let reading = log.follow(sync.subscribe([list.id], from: [list.id: list.revision]))
        let first = try await sync.patch(list.id, ops: Self.milk)
        #expect(first.revision == 2)
        #expect(await log.waitForChange(2))

        let node2 = try await nodes.start(port: node2Port)
        defer { node2.kill() }
        #expect(await node1.end(signal: SIGTERM) == .exited(0))

        // The goodbye moved both connections on; the next patch goes to node 2.
        let second = try await sync.patch(list.id, ops: [.toggle(.id(first.ids[0].id))])
        #expect(second.revision == 3)
        #expect(sync.patchServer == node2.serverAddress)
        #expect(await log.waitForChange(3))
        #expect(log.changeRevisions == [2, 3])
        #expect(await log.wait { $0.reconnections.count >= 2 })
        #expect(log.reconnections.allSatisfy { $0.from == node1.serverAddress && $0.to == node2.serverAddress })
        let subscription = log.reconnections.first { $0.subscription == 1 }
        #expect(subscription?.reason.contains("SHUTTING_DOWN") == true)

        await sync.close()
        reading.cancel()
    }
}
