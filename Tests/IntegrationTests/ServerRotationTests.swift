@testable import ChecklistClient
import Testing

/// The order in which a `ChecklistSync` tries its servers, and the
/// addresses the tools and the library take.
@Suite struct ServerRotationTests {
    let a = ServerAddress(host: "a", port: 1)
    let b = ServerAddress(host: "b", port: 2)
    let c = ServerAddress(host: "::1", port: 3)

    @Test func theServerThatAnsweredComesFirstAndALostOneLast() {
        let rotation = ServerRotation([a, b, c])
        #expect(rotation.order(avoiding: nil) == [a, b, c])
        #expect(rotation.order(avoiding: a) == [b, c, a])
        rotation.answered(b)
        #expect(rotation.order(avoiding: nil) == [b, c, a])
        // Another connection still on a learns of its loss: b stays first.
        #expect(rotation.order(avoiding: a) == [b, c, a])
        #expect(rotation.order(avoiding: b) == [c, a, b])
        #expect(rotation.order(avoiding: c) == [a, b, c])
        rotation.answered(ServerAddress(host: "elsewhere", port: 9))  // not one of ours: ignored
        #expect(rotation.order(avoiding: nil) == [a, b, c])
    }

    @Test func addressesParseAndPrintBack() {
        #expect(ServerAddress.list(parsing: "a:1,b:2,[::1]:3") == [a, b, c])
        #expect([a, b, c].map(\.description).joined(separator: ",") == "a:1,b:2,[::1]:3")
        #expect(ServerAddress(parsing: "localhost:7420") == ServerAddress(host: "localhost", port: 7420))
        #expect(ServerAddress(parsing: "localhost") == nil)
        #expect(ServerAddress(parsing: "h:07420") == ServerAddress(host: "h", port: 7420))
    }

    @Test func whichFailuresMoveOnToTheNextServer() {
        #expect(ChecklistConnection.movesOn(ClientError(.connectionFailed, "refused")))
        #expect(ChecklistConnection.movesOn(ClientError(.timeout, "slow")))
        #expect(ChecklistConnection.movesOn(ClientError(.connectionClosed, "closed")))
        #expect(ChecklistConnection.movesOn(.server(ChecklistError(.shuttingDown, "draining"))))
        #expect(ChecklistConnection.movesOn(.server(ChecklistError(.limitExceeded, "full"))))
        #expect(!ChecklistConnection.movesOn(.server(ChecklistError(.notAuthenticated, "bad token"))))
        #expect(!ChecklistConnection.movesOn(ClientError(.certificateRejected, "unknown CA")))
        let two = ChecklistConnection.noServer([(a, ClientError(.timeout, "t1")), (b, ClientError(.timeout, "t2"))])
        #expect(two.code == .timeout)
        #expect(two.message == "no server of 2 could be used (a:1: t1; b:2: t2)")
        let mixed = ChecklistConnection.noServer([(a, ClientError(.timeout, "t")), (b, .server(ChecklistError(.shuttingDown, "bye")))])
        #expect(mixed.code == .connectionFailed)
    }
}
