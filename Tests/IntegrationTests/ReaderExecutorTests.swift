import ChecklistClient
import ChecklistModel
import Foundation
import Testing

/// `ChecklistConnection.readerExecutor`: tasks that prefer the shared reader
/// thread run there, pipelined requests from them reach their own callers,
/// and a connection that drops fails every request still waiting.
@Suite(.timeLimit(.minutes(5))) struct ReaderExecutorTests {
    /// The name of the thread running the caller (/proc/thread-self/comm).
    static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A connection to `server` and a new list of `rows` rows "row 0", "row 1", ...
    static func connectWithList(_ server: TestServer, client name: String, name listName: String,
                                rows: Int) async throws -> (ChecklistConnection, ListSummary) {
        let client = try await ChecklistConnection.connect(host: "127.0.0.1", port: server.port, clientName: name)
        let list = try await client.createList(name: listName, icon: "")
        _ = try await client.patch(list.id, ops: (0..<rows).map {
            .insert(tempRef: nil, position: .end, fields: ItemFields(text: "row \($0)"))
        })
        return (client, list)
    }

    @Test func aTaskPreferringTheReaderRunsThereAndGetsEveryAnswer() async throws {
        let executor = try #require(ChecklistConnection.readerExecutor)
        let server = try TestServer.start()
        defer { server.stop() }
        let (client, list) = try await Self.connectWithList(server, client: "reader-executor", name: "Executor", rows: 60)
        let names = try await withTaskExecutorPreference(executor) {
            var names: Set<String> = [Self.threadName()]
            for offset in stride(from: UInt64(0), to: 50, by: 7) {
                let page = try await client.pageBytes(list.id, start: .offset(offset), limit: 10)
                names.insert(Self.threadName())
                var texts: [String] = []
                page.forEachRow { texts.append($0.text) }
                #expect(texts == (0..<10).map { "row \(Int(offset) + $0)" })
                let items = try await client.page(list.id, start: .offset(offset), limit: 3)
                names.insert(Self.threadName())
                #expect(items.items.map(\.fields.text) == (0..<3).map { "row \(Int(offset) + $0)" })
            }
            return names
        }
        #expect(names == ["checklist-io"])
        await client.close()
    }

    @Test func pipelinedPagesFromTasksOnTheReaderEachReachTheirCaller() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let (client, list) = try await Self.connectWithList(server, client: "reader-pipeline", name: "Pipeline", rows: 200)
        // 16 tasks on one connection, each with a request in flight at once.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<16 {
                group.addTask(executorPreference: ChecklistConnection.readerExecutor) {
                    for round in 0..<10 {
                        let offset = UInt64((task * 11 + round * 3) % 190)
                        let page = try await client.pageBytes(list.id, start: .offset(offset), limit: 10)
                        #expect(page.offset == offset && page.count == 10)
                        #expect(page.items.map(\.fields.text) == (0..<10).map { "row \(Int(offset) + $0)" })
                    }
                }
            }
            try await group.waitForAll()
        }
        await client.close()
    }

    /// The stub server holds 12 requests in flight, answers 5 in the order
    /// they came and drops the connection: those 5 reach their callers, the
    /// other 7 fail with `connectionClosed`; on the reader executor and on
    /// the cooperative pool.
    @Test(arguments: [true, false])
    func aConnectionDroppedMidPipelineFailsEveryWaitingRequest(onReader: Bool) async throws {
        let stub = try PipelineStubServer(expected: 12, answered: 5)
        defer { stub.stop() }
        let client = try await ChecklistConnection.connect(host: "127.0.0.1", port: stub.port, clientName: "dropped-pipeline",
                                                           compression: false)
        let executor = onReader ? ChecklistConnection.readerExecutor : nil
        let outcomes = await withTaskGroup(of: (UInt64, Result<String, ClientError>).self) { group in
            for n in 0..<12 {
                let offset = UInt64(n * 10)
                group.addTask(executorPreference: executor) {
                    do {
                        let page = try await client.pageBytes(ListID(1), start: .offset(offset), limit: 1)
                        #expect(page.offset == offset && page.count == 1)
                        return (offset, .success(page.items.first?.fields.text ?? ""))
                    } catch let error as ClientError {
                        return (offset, .failure(error))
                    } catch {
                        return (offset, .failure(ClientError(.protocolViolation, "unexpected \(error)")))
                    }
                }
            }
            var outcomes: [UInt64: Result<String, ClientError>] = [:]
            for await (offset, outcome) in group { outcomes[offset] = outcome }
            return outcomes
        }
        let order = stub.received.withLock { $0 }
        #expect(Set(order) == Set((0..<12).map { UInt64($0 * 10) }))
        for (index, offset) in order.enumerated() {
            switch outcomes[offset] {
            case .success(let text)?:
                #expect(index < 5, "request \(index) in arrival order was never answered")
                #expect(text == "row \(offset)")
            case .failure(let error)?:
                #expect(index >= 5, "answered request \(index) failed: \(error)")
                #expect(error.code == .connectionClosed, "\(error)")
            case nil:
                Issue.record("no outcome for offset \(offset)")
            }
        }
        // Later requests fail at once.
        await #expect(throws: ClientError.self) { try await client.pageBytes(ListID(1), limit: 1) }
        await client.close()
    }
}
