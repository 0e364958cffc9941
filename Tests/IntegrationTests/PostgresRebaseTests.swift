import ChecklistClient
import ChecklistModel
import ChecklistTesting
import Foundation
import Testing

/// A PATCH whose commit loses to another node's is rebased, not failed
/// (docs/POSTGRES.md, "Several nodes"): the committer catches the list up
/// with the other node's changes inside its transaction and applies the
/// patch again on top, answering what that gave. Only a PATCH with a
/// baseRevision the other node's commit made stale gets CONFLICT. List ids
/// come from blocks reserved per node, so creations never collide.
@Suite(.enabled(if: PostgresCluster.binariesFound, "no PostgreSQL binaries (Debian package postgresql): skipped"),
       .timeLimit(.minutes(10)))
struct PostgresRebaseTests {
    /// Several writers per node, all at once, on one list, each answer
    /// checked: nothing fails (no UNAVAILABLE from a lost race), every
    /// answer's revision is distinct and together they are exactly the
    /// revisions 2...final (+1 per commit), the ids answered are the items'
    /// ids, each insert is there once, each toggle flipped once.
    @Test(arguments: [2, 3])
    func unconditionalPatchesThroughEveryNodeAllSucceed(nodeCount: Int) async throws {
        let nodes = try PostgresNodesTests.nodes(nodeCount, ["--log-level", "debug"])
        defer { nodes.forEach { $0.stop() } }
        let setup = try await nodes[0].connect()
        let list = try await setup.createList(name: "Rebased", icon: "Inbox")
        // One item every writer toggles: each toggle must flip what the last left.
        let seed = try await setup.patch(list.id, ops: [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "toggled"))])
        let toggled = try #require(seed.ids.first?.id)
        await setup.close()
        for node in nodes { #expect(try await PostgresNodesTests.waitFor(list.id, at: 2, on: node)) }

        let perWriter = 30
        let writers = nodes.indices.flatMap { n in (0..<3).map { (n, $0) } }
        let answers = try await withThrowingTaskGroup(of: [(text: String?, ok: PatchOK)].self) { group in
            for (n, w) in writers {
                group.addTask {
                    let client = try await nodes[n].connect(name: "writer")
                    var mine: [(String?, PatchOK)] = []
                    for i in 0..<perWriter {
                        if i % 3 == 2 {
                            mine.append((nil, try await client.patch(list.id, ops: [.toggle(.id(toggled))])))
                        } else {
                            let text = "n\(n)w\(w)i\(i)"
                            mine.append((text, try await client.patch(list.id, ops: [
                                .insert(tempRef: 9, position: .index(0), fields: ItemFields(text: text))])))
                        }
                    }
                    await client.close()
                    return mine
                }
            }
            var all: [(text: String?, ok: PatchOK)] = []
            for try await mine in group { all += mine }
            return all
        }
        let total = writers.count * perWriter
        let final = Revision(2 + total)
        #expect(answers.map(\.ok.revision).sorted() == Array(3...final), "each commit moves the revision by exactly 1")
        for node in nodes { #expect(try await PostgresNodesTests.waitFor(list.id, at: final, on: node)) }

        let inserts = answers.filter { $0.text != nil }
        let toggles = answers.count - inserts.count
        for (index, node) in nodes.enumerated() {
            let client = try await node.connect()
            let items = try await PostgresNodesTests.texts(list.id, client)
            #expect(items.count == inserts.count + 1, "node \(index)")
            #expect(Set(items.map(\.id)).count == items.count, "an item id was given twice")
            let byID = Dictionary(items.map { ($0.id, $0.text) }, uniquingKeysWith: { first, _ in first })
            for answer in inserts {
                #expect(answer.ok.ids.count == 1)
                #expect(byID[answer.ok.ids[0].id] == answer.text, "the id answered is the inserted item's")
            }
            let summary = try #require(try await client.lists().first { $0.id == list.id })
            #expect(summary.itemCount == UInt64(items.count))
            // Every item unchecked but the toggled one, checked after an odd number of flips.
            #expect(summary.uncheckedCount == UInt64(items.count - (toggles % 2)))
            await client.close()
        }
        // The writers did collide: commits were rebased, not failed.
        #expect(nodes.contains { $0.process.standardError.contains("event=postgres_rebased") })
        #expect(!nodes.contains { $0.process.standardError.contains("event=postgres_conflict") })
    }

    /// Conditional patches from every node, each against the revision its
    /// node last answered: every answer is PATCH_OK or CONFLICT (never
    /// UNAVAILABLE), and the list moved by exactly the PATCH_OKs.
    @Test func aStaleBaseRevisionGetsConflict() async throws {
        let nodes = try PostgresNodesTests.nodes(2)
        defer { nodes.forEach { $0.stop() } }
        let setup = try await nodes[0].connect()
        let list = try await setup.createList(name: "Conditional", icon: "Inbox")
        await setup.close()
        #expect(try await PostgresNodesTests.waitFor(list.id, at: 1, on: nodes[1]))

        let outcomes = try await withThrowingTaskGroup(of: (ok: Int, conflicts: Int).self) { group in
            for n in nodes.indices {
                for w in 0..<2 {
                    group.addTask {
                        let client = try await nodes[n].connect(name: "writer")
                        var ok = 0
                        var conflicts = 0
                        var base: Revision = 1
                        for i in 0..<40 {
                            do {
                                let answer = try await client.patch(list.id, baseRevision: base, ops: [
                                    .insert(tempRef: nil, position: .end, fields: ItemFields(text: "n\(n)w\(w)i\(i)"))])
                                base = answer.revision
                                ok += 1
                            } catch let error as ClientError {
                                let server = try #require(error.serverError, "\(error)")
                                #expect(server.code == .conflict, "\(server)")
                                base = try #require(server.revision)
                                conflicts += 1
                            }
                        }
                        await client.close()
                        return (ok, conflicts)
                    }
                }
            }
            var total = (ok: 0, conflicts: 0)
            for try await one in group { total = (total.ok + one.ok, total.conflicts + one.conflicts) }
            return total
        }
        #expect(outcomes.ok + outcomes.conflicts == 160)
        #expect(outcomes.conflicts > 0, "four writers on one list never collided")
        let final = Revision(1 + outcomes.ok)
        for node in nodes {
            #expect(try await PostgresNodesTests.waitFor(list.id, at: final, on: node))
            let client = try await node.connect()
            #expect(try await PostgresNodesTests.texts(list.id, client).count == outcomes.ok)
            await client.close()
        }
    }

    /// Lists created through two nodes at the same time all succeed and
    /// get distinct ids, and both nodes list all of them.
    @Test func concurrentCreationsThroughTwoNodesGetDistinctIDs() async throws {
        let nodes = try PostgresNodesTests.nodes(2)
        defer { nodes.forEach { $0.stop() } }
        let perWriter = 40
        let created = try await withThrowingTaskGroup(of: [ListSummary].self) { group in
            for n in nodes.indices {
                for w in 0..<2 {
                    group.addTask {
                        let client = try await nodes[n].connect(name: "creator")
                        var mine: [ListSummary] = []
                        for i in 0..<perWriter { mine.append(try await client.createList(name: "n\(n)w\(w)i\(i)")) }
                        await client.close()
                        return mine
                    }
                }
            }
            var all: [ListSummary] = []
            for try await mine in group { all += mine }
            return all
        }
        #expect(created.count == 4 * perWriter)
        #expect(Set(created.map(\.id)).count == created.count, "two creations got the same id")
        let createdAt = Dictionary(uniqueKeysWithValues: created.map { ($0.id, $0.revision) })
        for node in nodes {
            #expect(try await PostgresNodesTests.waitFor(createdAt, on: node), "every created list reaches the node")
            let client = try await node.connect()
            let listed = try await client.lists()
            #expect(Set(listed.map(\.id)) == Set(created.map(\.id)))
            #expect(Set(listed.map(\.name)) == Set(created.map(\.name)))
            await client.close()
        }
    }
}
