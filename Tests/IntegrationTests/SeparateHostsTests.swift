import ChecklistClient
import ChecklistModel
import ChecklistTesting
import Foundation
import Synchronization
import Testing

/// A node and PostgreSQL on separate hosts (network namespaces joined by
/// veth pairs, issue 13): a cut database link, and a database link with
/// added latency. One node each; the database itself is checked directly
/// (psql) and through a checker node started after the test's node stopped.
extension NetworkLabSuites {
    @Suite(.enabled(if: SeparateHosts.available,
                    "network namespaces cannot be made here (they need root and iproute2's ip; the reason is on stderr) or no PostgreSQL binaries: skipped"),
           .timeLimit(.minutes(6)))
    struct SeparateHostsTests {
        /// The link is cut under two writers: the node notices within the
        /// bound of its link limits (docs/POSTGRES.md, "A dead link") and
        /// answers the writes of the transaction in flight with UNAVAILABLE
        /// (outcome unknown: the node keeps them and commits them once the
        /// database is back, Protocol/SPEC.md section 7), then refuses new
        /// writes with UNAVAILABLE, applying none of them; reads of its cache
        /// go on, except of the list with changes whose outcome is unknown
        /// (a read is what is committed). The link comes back: the node reconnects, takes writes again,
        /// and the database holds every acknowledged patch exactly once, each
        /// patch of unknown outcome at most once and no refused one, at one
        /// revision per commit.
        @Test func aNodeCutOffFromItsDatabaseRefusesWritesServesReadsAndRecovers() async throws {
            let hosts = try SeparateHosts()
            defer { hosts.remove() }
            let node = try hosts.startNode("n1", route: .ownLink)
            defer { node.process.kill(); node.relay?.stop() }
            let link = try #require(node.databaseLink)

            // A request that hangs on the dead link fails the test instead of holding it to its time limit.
            let setup = try await node.connect(requestTimeout: .seconds(90))
            let list = try await setup.createList(name: "Cut off", icon: "Inbox").id
            let untouched = try await setup.createList(name: "Untouched", icon: "Inbox").id
            _ = try await setup.patch(untouched, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "still"))])
            let outcomes = WriteOutcomes()
            let writers = (0..<2).map { w in
                Task { await outcomes.write(to: node, list: list, writer: w, of: 2, until: .refused) }
            }
            #expect(await outcomes.acknowledged.wait(forCount: 20, unlessMoreStoppedThan: 0), "writes before the cut")

            let logOffset = node.process.standardErrorCount
            let cutAt = ContinuousClock.now
            try link.cut()
            for writer in writers { await writer.value }  // each ends at its first UNAVAILABLE
            let refusedAfter = cutAt.duration(to: .now)
            #expect(outcomes.refused.count == 2, "each writer got UNAVAILABLE: \(outcomes)")
            #expect(outcomes.timedOut == 0, "a write hung on the dead link: \(outcomes)")
            // 15 s by the link limits; the rest is slack for a loaded machine.
            #expect(refusedAfter < .seconds(45), "writes were refused \(refusedAfter) after the cut")
            #expect(node.process.waitForStandardError(containing: "event=postgres_lost", after: logOffset, timeout: .seconds(5)))

            // Reads of the cached lists go on, and a write is refused,
            // unapplied. (The writers' UNAVAILABLE answers came for the
            // transaction in flight at the cut: their outcome is unknown,
            // checked below; the list they wrote is not read meanwhile.)
            #expect(try await setup.page(untouched, limit: 10).items.map(\.text) == ["still"])
            try await expectRefused("a page showing changes of unknown outcome") { try await setup.page(list, limit: 1000).items.count }
            do {
                try await setup.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "while cut"))])
                Issue.record("a patch was acknowledged while the link was cut")
            } catch let error as ClientError {
                #expect(error.serverError?.code == .unavailable, "\(error)")
            }

            try link.restore()
            #expect(node.process.waitForStandardError(containing: "event=postgres_reconnected", after: logOffset, timeout: .seconds(60)))
            let back = try await setup.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "back"))])
            let texts = Set(try await setup.page(list, limit: 1000).items.map(\.text))
            #expect(texts.contains("back"))
            #expect(outcomes.acknowledgedTexts.isSubset(of: texts), "an acknowledged patch is missing")
            await setup.close()
            #expect(node.stop() == .exited(0))

            try await expectStored(list: list, in: hosts, acknowledged: outcomes.acknowledgedTexts.union(["back"]),
                             revisions: outcomes.acknowledgedRevisions.union([back.revision]), unknown: outcomes.refused,
                             refused: ["while cut"])
        }

        /// 20 ms each way on the database link (4 round trips a transaction):
        /// four writers through one node still commit every patch once, in one
        /// order, with group commit gathering what arrives meanwhile.
        @Test func aNodeBehindADelayedLinkCommitsCorrectly() async throws {
            let hosts = try SeparateHosts()
            defer { hosts.remove() }
            let node = try hosts.startNode("n1", route: .relay(latency: .milliseconds(20)))
            defer { node.process.kill(); node.relay?.stop() }
            let relay = try #require(node.relay)

            let setup = try await node.connect()
            let list = try await setup.createList(name: "Far away", icon: "Inbox").id
            await setup.close()
            let outcomes = WriteOutcomes()
            let writers = (0..<4).map { w in
                Task { await outcomes.write(to: node, list: list, writer: w, of: 4, until: .count(25)) }
            }
            for writer in writers { await writer.value }
            #expect(outcomes.acknowledged.count == 100, "\(outcomes)")
            #expect(outcomes.unknown == 0 && outcomes.refused.isEmpty && outcomes.timedOut == 0, "\(outcomes)")
            #expect(relay.connectionsAccepted >= 1, "the node's database link did not go through the relay")
            #expect(node.stop() == .exited(0))

            try await expectStored(list: list, in: hosts, acknowledged: outcomes.acknowledgedTexts,
                             revisions: outcomes.acknowledgedRevisions, unknown: [], refused: [])
        }

        /// The database holds `list` at one revision per commit, every
        /// acknowledged patch at its revision, and (read back through a checker
        /// node) every acknowledged text exactly once, each text of unknown
        /// outcome at most once, and no refused one.
        private func expectStored(list: ListID, in hosts: SeparateHosts, acknowledged: Set<String>, revisions: Set<Revision>,
                                  unknown: Set<String>, refused: Set<String>) async throws {
            let stored = try hosts.query("SELECT revision FROM lists WHERE id = \(list.rawValue)")
            let revision = try #require(stored.first?.first.flatMap { Revision($0) })
            let changes = Set(try hosts.query("SELECT revision FROM changes WHERE list_id = \(list.rawValue)")
                .compactMap { $0.first.flatMap { Revision($0) } })
            #expect(changes == Set(1...revision), "the revision grows by exactly 1 per commit")
            #expect(revisions.isSubset(of: changes), "an acknowledged revision is not in the database")

            let checker = try hosts.startCheckerNode()
            defer { checker.stop() }
            let connection = try await ChecklistConnection.connect(host: checker.host, port: checker.port, clientName: "checker")
            let texts = try await connection.page(list, limit: 1000).items.map(\.text)
            await connection.close()
            for text in acknowledged { #expect(texts.count { $0 == text } == 1, "acknowledged \(text) stored \(texts.count { $0 == text }) times") }
            for text in unknown { #expect(texts.count { $0 == text } <= 1, "\(text), of unknown outcome, stored \(texts.count { $0 == text }) times") }
            #expect(refused.isDisjoint(with: texts), "a refused patch is in the database")
        }
    }
}

/// What the writers of a test saw. Each patch inserts one item with text
/// `p<n>`, `n` unique across the writers.
final class WriteOutcomes: Sendable, CustomStringConvertible {
    /// When a writer stops.
    enum Until: Sendable {
        /// At its first `UNAVAILABLE`.
        case refused
        /// After this many patches, whatever their outcome.
        case count(Int)
    }

    /// The `n` of every acknowledged patch.
    let acknowledged = Acknowledged()
    private struct State {
        var revisions: Set<Revision> = []
        var refused: Set<String> = []
        var unknown = 0
        var timedOut = 0
    }
    private let state = Mutex(State())
    /// Most patches one writer sends: the list stays within one page.
    static let patchesPerWriter = 300

    var acknowledgedTexts: Set<String> { Set(acknowledged.all.map { "p\($0)" }) }
    var acknowledgedRevisions: Set<Revision> { state.withLock { $0.revisions } }
    /// The texts of the patches answered `UNAVAILABLE`.
    var refused: Set<String> { state.withLock { $0.refused } }
    /// Patches whose connection closed before an answer (their batch failed).
    var unknown: Int { state.withLock { $0.unknown } }
    /// Patches with no answer within the request timeout.
    var timedOut: Int { state.withLock { $0.timedOut } }

    var description: String {
        state.withLock { "\(acknowledged.count) acknowledged, \($0.refused.count) refused, \($0.unknown) unknown, \($0.timedOut) timed out" }
    }

    /// Writer `w` of `writers`: patches `list` through `node`, one item a
    /// patch, reconnecting when its connection closes, until `until`.
    func write(to node: HostedNode, list: ListID, writer w: Int, of writers: Int, until: Until) async {
        var connection: ChecklistConnection?
        var n = w
        let attempts: Int
        switch until {
        case .refused: attempts = Self.patchesPerWriter
        case .count(let count): attempts = min(count, Self.patchesPerWriter)
        }
        for _ in 0..<attempts {
            defer { n += writers }
            do {
                if connection == nil { connection = try await node.connect(name: "writer-\(w)", requestTimeout: .seconds(60)) }
                let ok = try await connection!.patch(list, ops: [.insert(tempRef: nil, position: .end, fields: ItemFields(text: "p\(n)"))])
                state.withLock { _ = $0.revisions.insert(ok.revision) }
                acknowledged.insert(n)
            } catch let error as ClientError where error.serverError?.code == .unavailable {
                state.withLock { _ = $0.refused.insert("p\(n)") }
                if case .refused = until { break }
            } catch let error as ClientError where error.code == .timeout {
                state.withLock { $0.timedOut += 1 }
                break
            } catch {
                state.withLock { $0.unknown += 1 }
                await connection?.close()
                connection = nil
            }
        }
        await connection?.close()
    }
}
