import ChecklistClient
import ChecklistModel
import Foundation
import Testing

/// Connections of one process, plaintext or TLS, are read and written by one
/// shared thread (`IOThread`), not a thread each.
@Suite(.timeLimit(.minutes(5))) struct SharedReaderTests {
    /// Names of this process's threads, from /proc/self/task/*/comm.
    static func threadNames() throws -> [String] {
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    @Test func manyConnectionsShareOneReaderAndEachGetsItsAnswers() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        var clients: [ChecklistConnection] = []
        for n in 0..<12 {
            clients.append(try await ChecklistConnection.connect(host: "127.0.0.1", port: server.port, clientName: "shared-\(n)"))
        }
        let list = try await clients[0].createList(name: "Shared", icon: "")
        _ = try await clients[0].patch(list.id, ops: (0..<50).map {
            .insert(tempRef: nil, position: .end, fields: ItemFields(text: "row \($0)"))
        })
        // Every connection reads pages at once; each answer reaches its own caller.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (n, client) in clients.enumerated() {
                group.addTask {
                    for round in 0..<20 {
                        let offset = UInt64((n + round) % 40)
                        let page = try await client.pageBytes(list.id, start: .offset(offset), limit: 10)
                        #expect(page.offset == offset && page.count == 10)
                        var texts: [String] = []
                        page.forEachRow { texts.append($0.text) }
                        #expect(texts == (0..<10).map { "row \(Int(offset) + $0)" })
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try Self.threadNames().filter { $0 == "checklist-io" }.count == 1)
        for client in clients { await client.close() }
        // A closed connection's requests fail; the reader goes on serving the others.
        await #expect(throws: ClientError.self) { try await clients[1].pageBytes(list.id, limit: 10) }
        let fresh = try await ChecklistConnection.connect(host: "127.0.0.1", port: server.port, clientName: "after")
        #expect(try await fresh.pageBytes(list.id, limit: 5).count == 5)
        await fresh.close()
    }
}
