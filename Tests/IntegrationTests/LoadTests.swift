import ChecklistClient
import ChecklistModel
import ChecklistSocket
import ChecklistTesting
import ChecklistWire
import Foundation
import Glibc
import Testing

/// The server under load: hundreds of connections doing mixed work with
/// every answer checked, the load tool itself, and a graceful stop while
/// clients are busy. Counts bound every test, never the clock.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct LoadTests {
    static let items = 200

    /// 300 connections of the client library, each doing 20 requests of a
    /// page/patch/lists mix, every answer checked against what the lists
    /// must hold; zero errors, and STATS agrees.
    @Test func hundredsOfConnectionsDoMixedWorkWithoutAnError() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let lists = try await makeLoadLists(on: server, count: 4, items: Self.items)
        let connections = 300
        let rounds = 20
        let done = try await withThrowingTaskGroup(of: Int.self) { group in
            for n in 0..<connections {
                group.addTask {
                    let client = try await server.connect(name: "load-\(n)")
                    var revisions = [Revision](repeating: 0, count: lists.count)
                    for r in 0..<rounds {
                        let k = (n + r) % lists.count
                        let spot = (n * 31 + r * 17) % Self.items
                        switch (n + r) % 10 {
                        case 0..<6:
                            let page = try await client.page(lists[k], start: .offset(UInt64(spot)), limit: 25)
                            #expect(page.total == UInt64(Self.items) && page.offset == UInt64(spot))
                            #expect(page.items.count == min(25, Self.items - spot))
                            #expect(page.items.enumerated().allSatisfy { j, item in
                                item.id.rawValue == UInt64(spot + j + 1) && item.text == "item \(spot + j)"
                            })
                            #expect(page.revision >= revisions[k])
                            revisions[k] = page.revision
                        case 6..<9:
                            let ok = try await client.patch(lists[k], ops: [.toggle(.id(ItemID(UInt64(spot + 1))))])
                            #expect(ok.revision > revisions[k] && ok.ids.isEmpty)
                            revisions[k] = ok.revision
                        default:
                            let summaries = try await client.lists()
                            for (i, id) in lists.enumerated() {
                                let summary = try #require(summaries.first { $0.id == id })
                                #expect(summary.itemCount == UInt64(Self.items) && summary.revision >= revisions[i])
                                revisions[i] = summary.revision
                            }
                        }
                    }
                    await client.close()
                    return rounds
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(done == connections * rounds)
        let stats = try await serverStats(server)
        #expect(stats.errors.isEmpty, "errors: \(stats.errors)")
        #expect(stats.connectionsTotal >= UInt64(connections))
        let handled = stats.requests.filter { [.getPage, .patch, .listLists].contains($0.type) }
        // The set-up made one PATCH per list.
        #expect(handled.reduce(0) { $0 + $1.requests } == UInt64(connections * rounds + lists.count))
        #expect(stats.lists == UInt64(lists.count) && stats.items == UInt64(lists.count * Self.items))
    }

    /// `checklist-bench load` against a running server: 200 connections,
    /// pipelined, a mix of all three kinds at 3,000 requests a second (open
    /// loop, so that it does not take every core from the tests running
    /// beside it); its own checks find nothing wrong and its JSON has the
    /// documented keys.
    @Test func theLoadToolChecksEveryAnswerAndFindsNoError() async throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let run = try BackgroundCommand("checklist-bench", [
            "load", "--server", "127.0.0.1:\(server.port)", "--connections", "200", "--seconds", "2",
            "--pipeline", "4", "--rate", "3000", "--mix", "page=60,patch=30,lists=10", "--lists", "3", "--items", "500",
            "--json",
        ])
        let report = try benchJSON(try await run.wait())
        for key in ["scenario", "connections", "requests", "requestsPerSecond", "errors", "p50Ms", "p90Ms",
                    "p99Ms", "p999Ms", "maxMs", "errorsByCode"] {
            #expect(report[key] != nil, "no \(key) in \(report)")
        }
        #expect(report["scenario"] as? String == "load")
        #expect(report["connectionsOpen"] as? Int == 200)
        #expect(report["errors"] as? Int == 0, "\(report["errorsByCode"] ?? "")")
        #expect((report["requests"] as? Int ?? 0) > 0)
        for kind in ["page", "patch", "lists"] { #expect((report["\(kind)Requests"] as? Int ?? 0) > 0) }
        // It deleted its lists from a server it did not start.
        #expect(try await serverStats(server).lists == 0)
    }

    /// SIGTERM while clients are busy: every connection gets the answers to
    /// the requests the server read (in order), then ERROR SHUTTING_DOWN with
    /// request id 0, then a clean end of stream (no reset); the load tool
    /// running at the same time sees no wrong answer; the server exits 0.
    /// With `--fsync always` answers wait for the log: the goodbye still
    /// comes after them.
    @Test(arguments: [[], ["--fsync", "always"]])
    func sigtermUnderLoadAnswersWhatWasReadAndClosesCleanly(serverArguments: [String]) async throws {
        let server = try TestServer.start(serverArguments)
        defer { server.stop() }
        let lists = try await makeLoadLists(on: server, count: 2, items: 1000)
        let load = try BackgroundCommand("checklist-bench", [
            "load", "--server", "127.0.0.1:\(server.port)", "--connections", "100", "--seconds", "30",
            "--pipeline", "2", "--rate", "2000", "--json",
        ])
        // The load tool says when its connections are made and the run began.
        #expect(try await load.waitForStandardError(containing: "checklist-bench: running, 100/100 connections"))

        // Raw clients with a burst of pipelined requests each, all sent before
        // the signal; on a thread of their own (their reads block).
        let burst = 300
        let port = server.port
        let process = server.process
        let problems = try await BlockingWork.run { () throws -> [String] in
            let raws = try (0..<20).map { _ in try RawConnection(port: port) }
            for raw in raws {
                try raw.handshake()
                var bytes = WireWriter()
                var encoder = FrameEncoder()
                for id in 2..<UInt32(2 + burst) {
                    let request: Request = id % 3 == 0
                        ? .patch(Patch(list: lists[1], ops: [.toggle(.id(ItemID(UInt64(id % 1000 + 1))))]))
                        : .getPage(GetPage(list: lists[0], start: .offset(UInt64(id % 900)), limit: 100))
                    request.encode(requestID: id, into: &bytes, encoder: &encoder)
                }
                try raw.send(bytes.bytes)
            }
            process.send(signal: SIGTERM)

            var problems: [String] = []
            for (n, raw) in raws.enumerated() {
                var expected: UInt32 = 2
                while true {
                    let (header, message) = try raw.receive()
                    if header.requestID == 0 {
                        guard case .error(let goodbye) = message, goodbye.error.code == .shuttingDown else {
                            problems.append("client \(n): request id 0 frame \(message)")
                            break
                        }
                        break
                    }
                    if header.requestID != expected { problems.append("client \(n): answer \(header.requestID), expected \(expected)") }
                    expected += 1
                    switch message {
                    case .page(let page) where page.rows.count == 100 && page.header.total == 1000: break
                    case .patchOK(let ok) where ok.list == lists[1]: break
                    default: problems.append("client \(n): wrong answer \(message)")
                    }
                }
                if expected > UInt32(2 + burst) { problems.append("client \(n): more answers than requests") }
                if try !raw.readsCleanEndOfStream() { problems.append("client \(n): bytes after the goodbye") }
                raw.finish()
            }
            return problems
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(try await BlockingWork.run { process.waitForExit(timeout: .seconds(20)) } == .exited(0))
        #expect(try await BlockingWork.run { server.process.waitForStandardError(containing: "level=info event=stop ", timeout: .seconds(20)) })
        #expect(server.process.standardError.contains("graceful=true"))

        let report = try benchJSON(try await load.wait())
        let errors = report["errorsByCode"] as? [String: Int] ?? [:]
        #expect(errors.keys.allSatisfy { $0 == "SHUTTING_DOWN" || $0 == "closed" }, "\(errors)")
        #expect(errors["SHUTTING_DOWN", default: 0] >= 1, "its connections were open when the server stopped")
    }
}
