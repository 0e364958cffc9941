import ChecklistClient
import ChecklistConformance
import ChecklistModel
import ChecklistRandom
import ChecklistTesting
import ChecklistWire
import Foundation
import Testing

/// Mutated and random frames against a live server, for a bounded number
/// of connections. Afterwards the server must still answer well-formed
/// requests, alice's namespace (never authenticated to by the fuzzer) must
/// read exactly as before, and bob's namespace, which mutated requests may
/// legitimately change, must still be consistent (every list pages out
/// completely, with the counts LIST_LISTS reports).
///
/// `CHECKLIST_NETFUZZ_CONNECTIONS` and `CHECKLIST_NETFUZZ_SEED` override
/// the bounds for a longer run.
@Suite(.timeLimit(.minutes(10))) struct NetworkFuzzTests {
    @Test func mutatedAndRandomFramesLeaveTheServerAndItsDataIntact() async throws {
        let environment = ProcessInfo.processInfo.environment
        let connections = environment["CHECKLIST_NETFUZZ_CONNECTIONS"].flatMap(Int.init) ?? 1000
        let seed = environment["CHECKLIST_NETFUZZ_SEED"].flatMap(UInt64.init) ?? 0x5EC7_0007
        let server = try TokenServer.start()
        defer { server.stop() }
        try await Self.fuzzAndCheck(server, fuzzPort: server.port, connections: connections, seed: seed) { token in
            try await server.connect(token: token)
        }
    }

    /// The same over `checklistd`'s own TLS: the fuzzer's plaintext goes
    /// through an in-process TLS relay, so every session is also a full
    /// handshake, and cut and reset sessions end TLS connections mid-stream.
    @Test func mutatedAndRandomFramesOverTLS() async throws {
        let environment = ProcessInfo.processInfo.environment
        let connections = environment["CHECKLIST_NETFUZZ_TLS_CONNECTIONS"].flatMap(Int.init) ?? 300
        let seed = environment["CHECKLIST_NETFUZZ_SEED"].flatMap(UInt64.init) ?? 0x5EC7_0007
        let certificates = try TestCertificates.shared()
        let server = try TokenServer.start(tokens: TokenServer.defaultTokens, ["--tls-cert", certificates.server.certificateFile,
                                                                       "--tls-key", certificates.server.privateKeyFile])
        defer { server.stop() }
        let relay = try TLSTerminator.originating(to: server.port, certificates.clientConfiguration())
        defer { relay.stop() }
        let port = server.port
        try await Self.fuzzAndCheck(server, fuzzPort: relay.port, connections: connections, seed: seed) { token in
            try await ChecklistConnection.connect(host: "127.0.0.1", port: port, clientName: "fuzz-check", token: token,
                                                  timeout: .seconds(10), requestTimeout: .seconds(10),
                                                  tls: certificates.clientConfiguration())
        }
        let stats = try await Self.statsOverTLS(port: port, certificates)
        let tls = try #require(stats.tls)
        #expect(tls.handshakes >= UInt64(connections), "\(tls)")
        #expect(tls.recordErrors == 0 && tls.handshakeFailures == 0, "the relay speaks proper TLS: \(tls)")
    }

    private static func statsOverTLS(port: UInt16, _ certificates: TestCertificates) async throws -> StatsReport {
        let client = try await ChecklistConnection.connect(host: "127.0.0.1", port: port, clientName: "fuzz-stats",
                                                           token: TokenServer.bob, tls: certificates.clientConfiguration())
        let stats = try await client.stats()
        await client.close()
        return stats
    }

    /// Fills alice's namespace, fuzzes through `fuzzPort`, then checks the
    /// server is alive and the data intact (`connect` opens a checking client).
    private static func fuzzAndCheck(_ server: TokenServer, fuzzPort: UInt16, connections: Int, seed: UInt64,
                                     connect: @escaping @Sendable (String) async throws -> ChecklistConnection) async throws {
        // Alice's data, which nothing below may touch.
        let alice = try await connect(TokenServer.alice)
        for name in ["Groceries", "Chores"] {
            let list = try await alice.createList(name: name, icon: "Inbox")
            _ = try await alice.patch(list.id, ops: (1...20).map {
                .insert(tempRef: UInt64($0), position: .end, fields: ItemFields(text: "\(name) \($0)", checked: $0 % 3 == 0))
            })
        }
        await alice.close()

        // The fuzzing is blocking socket work: off the cooperative pool. It
        // returns what went wrong rather than recording it from its thread.
        let outcome = try await BlockingWork.run(throttled: true) { () throws -> FuzzOutcome in
            try Self.fuzz(port: fuzzPort, connections: connections, seed: seed)
        }
        print("network fuzz: \(connections) connections, \(outcome.frames) frames, \(outcome.answers) answers (seed \(seed))")
        for problem in outcome.problems { Issue.record("\(problem) (seed \(seed))") }

        #expect(server.process.exitStatus == nil, "the server exited: \(server.process.standardError.suffix(2000))")
        let client = try await connect(TokenServer.bob)
        let created = try await client.createList(name: "after the fuzz", icon: "Inbox")
        #expect(created.revision == 1)
        await client.close()
    }

    struct FuzzOutcome: Sendable {
        var frames = 0
        var answers = 0
        var problems: [String] = []
    }

    /// Snapshots alice's namespace, fuzzes, and checks both namespaces.
    static func fuzz(port: UInt16, connections: Int, seed: UInt64) throws -> FuzzOutcome {
        var outcome = FuzzOutcome()
        let reader = try FrameSocket(host: "127.0.0.1", port: port, timeout: .seconds(10))
        let limits = try reader.handshake(token: TokenServer.alice).limits
        let before = try StoreSnapshot.read(over: reader, limits: limits)

        var fuzzer = FrameFuzzer(seed: seed, listIDs: before.lists.map(\.id))
        for round in 0..<connections {
            let session = fuzzer.session()
            outcome.frames += session.frames
            let probe = try FrameSocket(host: "127.0.0.1", port: port, timeout: .seconds(10))
            do {
                try probe.send(session.bytes)
            } catch {
                continue  // the server may close before reading everything (lost framing)
            }
            if session.reset {
                probe.reset()
                continue
            }
            try? probe.shutdownSending()
            // Everything the server sends must decode, and it must close once our side is done.
            do {
                while true {
                    _ = try probe.receive()
                    outcome.answers += 1
                }
            } catch let failure as FrameSocket.Failure where failure.code == .closed {
            } catch {
                outcome.problems.append("round \(round): \(error)")
                return outcome
            }
        }

        let after = try StoreSnapshot.read(over: reader, limits: limits)
        if let difference = after.difference(from: before) {
            outcome.problems.append("alice's data changed: \(difference)")
        }
        let bob = try FrameSocket(host: "127.0.0.1", port: port, timeout: .seconds(10))
        try bob.handshake(token: TokenServer.bob)
        let bobs = try StoreSnapshot.read(over: bob, limits: limits)
        for list in bobs.lists {
            let rows = bobs.rows[list.id] ?? []
            if UInt64(rows.count) != list.itemCount || UInt64(rows.filter { !$0.checked }.count) != list.uncheckedCount {
                outcome.problems.append("bob's list \(list.id) pages out \(rows.count) rows, LIST_LISTS says \(list.itemCount)")
            }
        }
        try bob.expectAlive()
        return outcome
    }
}

/// Makes fuzzing sessions: a HELLO (with bob's token, or not, or mutated)
/// and a few frames, mostly mutations of valid requests, some random bytes.
struct FrameFuzzer {
    struct Session {
        var bytes: [UInt8]
        var frames: Int
        /// Reset the connection after sending instead of ending it cleanly.
        var reset: Bool
    }

    private var rng: SplitMix64
    private let seeds: [[UInt8]]

    init(seed: UInt64, listIDs: [ListID]) {
        rng = SplitMix64(seed: seed)
        // Valid requests of every type, aimed at alice's list ids (bob's
        // namespace must answer NOT_FOUND) and at bob's own new lists (ids
        // a little past alice's).
        let ids = listIDs + listIDs.map { ListID($0.rawValue + 2) } + [ListID(1)]
        var seeds: [[UInt8]] = []
        func add(_ request: Request) { seeds.append(FrameBytes.request(request, id: 7)) }
        add(.ping(Ping(data: [1, 2, 3])))
        add(.listLists(ListLists()))
        add(.createList(CreateList(name: "fuzz", icon: "No Icon")))
        for id in ids {
            add(.updateList(UpdateList(list: id, name: "renamed", icon: "Trips")))
            add(.deleteList(DeleteList(list: id)))
            add(.getPage(GetPage(list: id, filter: .unchecked, start: .anchor(ItemID(3)), limit: 5)))
            add(.patch(Patch(list: id, baseRevision: 2, ops: [
                .insert(tempRef: 1, position: .index(0), fields: ItemFields(text: "x", due: -5, price: 99)),
                .insert(tempRef: 2, position: .after(.temp(1)), fields: ItemFields(text: "y", checked: true)),
                .setText(.id(ItemID(2)), "t"), .setChecked(.temp(2), false), .toggle(.id(ItemID(1))),
                .setDue(.id(ItemID(3)), 1_700_000_000), .setRemind(.temp(1), true), .setPrice(.id(ItemID(4)), nil),
                .move(.temp(1), toIndex: 2), .delete(.id(ItemID(5))),
            ])))
        }
        seeds.append(FrameBytes.request(.hello(Hello(clientName: "fuzz", token: TokenServer.bob)), id: 1))
        self.seeds = seeds
    }

    mutating func session() -> Session {
        var bytes: [UInt8] = []
        switch rng.next(below: 10) {
        case 0..<6: bytes = FrameBytes.request(.hello(Hello(clientName: "fuzz", token: TokenServer.bob)), id: 1)
        case 6: bytes = mutate(FrameBytes.request(.hello(Hello(clientName: "fuzz", token: TokenServer.bob)), id: 1))
        default: break  // no HELLO: everything is answered HELLO_REQUIRED
        }
        let count = 1 + rng.next(below: 12)
        for _ in 0..<count {
            if rng.next(below: 10) == 0 {
                bytes += (0..<rng.next(below: 64)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            } else {
                bytes += mutate(seeds[rng.next(below: seeds.count)])
            }
        }
        return Session(bytes: bytes, frames: count, reset: rng.next(below: 8) == 0)
    }

    /// One to three mutations of `frame`.
    private mutating func mutate(_ frame: [UInt8]) -> [UInt8] {
        var f = frame
        for _ in 0..<(1 + rng.next(below: 3)) {
            guard !f.isEmpty else { break }
            let at = rng.next(below: f.count)
            switch rng.next(below: 9) {
            case 0: f[at] ^= UInt8(1) << UInt8(rng.next(below: 8))                          // flip a bit
            case 1: f[at] = UInt8(truncatingIfNeeded: rng.next())                             // set a byte
            case 2: f[at] = [0x00, 0x01, 0x7F, 0x80, 0xFF][rng.next(below: 5)]               // interesting byte
            case 3: f.insert(UInt8(truncatingIfNeeded: rng.next()), at: at)                  // insert (length now off)
            case 4: f.remove(at: at)                                                          // delete
            case 5: f = Array(f.prefix(at))                                                   // truncate
            case 6 where f.count > FrameHeader.size:                                          // body byte, length kept right
                f[FrameHeader.size + rng.next(below: f.count - FrameHeader.size)] ^= 0x55
                f.replaceSubrange(0..<4, with: FrameBytes.be32(UInt32(f.count - 4)))
            case 7 where f.count >= 4:                                                        // boundary lengths
                let lengths: [UInt32] = [0, 5, 6, 7, UInt32(f.count - 4) + 1, 4 << 20, (4 << 20) + 1, .max]
                f.replaceSubrange(0..<4, with: FrameBytes.be32(lengths[rng.next(below: lengths.count)]))
            case 8 where f.count > 5:                                                         // type or flags
                f[4 + rng.next(below: 2)] = UInt8(truncatingIfNeeded: rng.next())
            default: f[at] &+= 1
            }
        }
        return f
    }
}

extension SplitMix64 {
    /// A number in 0..<`bound` (by remainder, so the cases stay those of the recorded seeds).
    mutating func next(below bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
