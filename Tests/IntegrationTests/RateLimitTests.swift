import ChecklistClient
import ChecklistConformance
import ChecklistModel
import ChecklistTesting
import ChecklistWire
import Foundation
import Testing

/// `checklistd --rate-limit` end to end: a namespace over its rate is
/// answered RATE_LIMITED with the wait, beside one that goes on; the
/// client library's retry waits and succeeds.
@Suite(.timeLimit(.minutes(10))) struct RateLimitTests {
    /// One request per 100 s after a burst of 5: within the test, exactly 5 pass.
    @Test func aNamespaceOverItsRateIsRefusedBesideAnotherThatGoesOn() async throws {
        let server = try TokenServer.start(["--rate-limit", "0.01", "--rate-burst", "5"])
        defer { server.stop() }
        let port = server.port
        try await BlockingWork.run(throttled: true) {
            let alice = try FrameSocket(host: "127.0.0.1", port: port, timeout: .seconds(10))
            try alice.handshake(token: TokenServer.alice)
            // Pipelined: 20 at once.
            for id in UInt32(2)...21 { try alice.send(.ping(Ping(data: [UInt8(id)])), id: id) }
            var pongs = 0
            var waits: [UInt64] = []
            for _ in 2...21 {
                let answer = try alice.receive()
                switch answer.message {
                case .pong: pongs += 1
                case .error(let e) where e.error.code == .rateLimited: waits.append(e.error.retryAfterMilliseconds ?? 0)
                default: Issue.record("unexpected \(answer.message)")
                }
            }
            #expect(pongs == 5 && waits.count == 15)
            #expect(waits.allSatisfy { $0 > 90_000 && $0 <= 100_000 }, "\(waits)")
            // Bob's namespace has its own bucket: all of his burst goes through while alice waits.
            let bob = try FrameSocket(host: "127.0.0.1", port: port, timeout: .seconds(10))
            try bob.handshake(token: TokenServer.bob)
            for id in UInt32(2)...6 { try bob.expectAlive(id: id) }
            // Alice's other connections share her bucket; the refused connection stays usable.
            let again = try FrameSocket(host: "127.0.0.1", port: port, timeout: .seconds(10))
            try again.handshake(token: TokenServer.alice)
            try again.send(.listLists(ListLists()), id: 2)
            #expect(try again.expectError(2, .rateLimited).retryAfterMilliseconds != nil)
        }
    }

    /// The bucket refills one request every 2 s: a patch sent right after
    /// the bucket was emptied is refused, then sent again by the library
    /// after the wait the server named.
    @Test func theLibrarysRetryWaitsAsTold() async throws {
        let server = try TokenServer.start(["--rate-limit", "0.5", "--rate-burst", "1"])
        defer { server.stop() }
        let alice = try await server.connect(token: TokenServer.alice)
        let list = try await alice.createList(name: "Rated")  // alice's one request of the bucket
        let sync = ChecklistSync(servers: [ServerAddress(host: "127.0.0.1", port: server.port)], clientName: "rated",
                                 token: TokenServer.alice, retry: ChecklistSync.RetryPolicy(patchAttempts: 3))
        let ok = try await sync.patch(list.id, ops: [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "Tent"))])
        #expect(ok.revision == 2)
        await sync.close()
        // Bob's bucket is his own: he reads the server's figures at once.
        let bob = try await server.connect(token: TokenServer.bob)
        let stats = try await bob.stats()
        let refused = stats.errors.first { $0.code == .rateLimited }?.count ?? 0
        #expect(refused >= 1, "\(stats.errors)")
        await bob.close()
        await alice.close()
    }
}
