import ChecklistClient
import ChecklistModel
import ChecklistRandom
import ChecklistTesting
import Synchronization
import Testing

/// `--fsync always` against SIGKILL: whatever a client was told is saved
/// survives the crash, exactly once.
@Suite struct CrashRecoveryTests {
    @Test func acknowledgedPatchesSurviveSigkillExactlyOnce() async throws {
        let directory = try TemporaryDirectory(prefix: "checklistd-crash")
        defer { directory.remove() }
        var rng = SplitMix64(seed: 20261129)
        let acknowledged = Acknowledged()
        var listID: ListID?
        var next = 0
        for cycle in 0..<4 {
            let server = try TestServer.start(["--fsync", "always"], directory: directory)
            let client = try await server.connect()
            if listID == nil { listID = try await client.createList(name: "Crash", icon: "Inbox").id }
            let list = try #require(listID)
            try await Self.expectEveryAcknowledgedOnce(client, list: list, acknowledged.all, cycle: cycle)

            // Four writers patch as fast as they can; kill the server after a
            // random number of acknowledgements, with patches in flight.
            let killAfter = 20 + Int(rng.next() % 150)
            let first = next
            next += 100_000
            let writers = (0..<4).map { w in
                Task {
                    var n = first + w
                    while !Task.isCancelled {
                        do {
                            _ = try await client.patch(list, ops: [.insert(tempRef: nil, position: .end,
                                                                           fields: ItemFields(text: "p\(n)"))])
                        } catch {
                            return
                        }
                        acknowledged.insert(n)
                        n += 4
                    }
                }
            }
            let baseline = acknowledged.count
            while acknowledged.count < baseline + killAfter {
                await Task.yield()
            }
            server.crash()
            for w in writers { _ = await w.value }
            await client.close()
        }
        let server = try TestServer.start(["--fsync", "always"], directory: directory)
        defer { server.stop() }
        let client = try await server.connect()
        try await Self.expectEveryAcknowledgedOnce(client, list: try #require(listID), acknowledged.all, cycle: 4)
        await client.close()
    }

    private static func expectEveryAcknowledgedOnce(_ client: ChecklistConnection, list: ListID, _ acknowledged: Set<Int>,
                                                    cycle: Int) async throws {
        var texts: [String] = []
        var offset: UInt64 = 0
        while true {
            let page = try await client.page(list, start: .offset(offset), limit: 1000)
            texts += page.items.map(\.text)
            offset += UInt64(page.items.count)
            if !page.hasMore { break }
        }
        let counts = Dictionary(texts.map { ($0, 1) }, uniquingKeysWith: +)
        #expect(counts.values.allSatisfy { $0 == 1 }, "cycle \(cycle): some patch was applied twice")
        let missing = acknowledged.filter { counts["p\($0)"] == nil }
        #expect(missing.isEmpty, "cycle \(cycle): acknowledged patches lost: \(missing.sorted().prefix(10))")
    }
}

/// The patch numbers the server acknowledged, from several writer tasks.
final class Acknowledged: Sendable {
    private let numbers = Mutex<Set<Int>>([])
    func insert(_ n: Int) { _ = numbers.withLock { $0.insert(n) } }
    var count: Int { numbers.withLock { $0.count } }
    var all: Set<Int> { numbers.withLock { $0 } }
}
