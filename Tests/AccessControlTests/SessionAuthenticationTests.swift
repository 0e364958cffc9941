@testable import ChecklistServer
import ChecklistModel
import ChecklistStore
import ChecklistWire
import Testing

/// The handshake with access control, on the I/O-free session state machine:
/// bytes in, frames and a close decision out.
@Suite(.timeLimit(.minutes(10))) struct SessionAuthenticationTests {
    let store = Store()
    let access: AccessControl

    init() throws {
        access = AccessControl(table: try TokenTable.parse("alice-token alice\nbob-token bob\n"))
    }

    func session() -> ProtocolSession {
        let dispatcher = RequestDispatcher(store: store, serverName: "test", limits: .default,
                                           metrics: ServerMetrics(loops: 1, store: store))
        var session = ProtocolSession(dispatcher: dispatcher, limits: .default, accessControl: access)
        // An active connection whose first bytes came, as the handler has it.
        _ = session.state.activated(overConnectionLimit: false)
        _ = session.state.readable(tlsClientHelloOnPlainPort: false)
        #expect(session.state.state == .awaitingHello)
        return session
    }

    /// What the connection does after an exchange.
    enum Action: Equatable {
        /// Keep reading.
        case `continue`
        /// Send the answers, then close.
        case closeAfterFlush
    }

    /// Feeds `requests` one frame at a time, as the connection handler does
    /// (stopping at an outcome that closes the connection), and returns the
    /// answers and the action. Each outcome must describe its answer.
    func exchange(_ session: inout ProtocolSession, _ requests: [(Request, UInt32)])
        -> (answers: [(UInt32, ServerMessage)], action: Action) {
        var w = WireWriter()
        var encoder = FrameEncoder()
        for (request, id) in requests { request.encode(requestID: id, into: &w, encoder: &encoder) }
        var outcomes: [RequestOutcome] = []
        w.bytes.withUnsafeBytes { raw in
            var offset = 0
            while case let .frame(header, body, size) = FrameParser.next(in: UnsafeRawBufferPointer(rebasing: raw[offset...]),
                                                                           maxFrameBytes: .max) {
                let frame = UnsafeRawBufferPointer(rebasing: raw[offset...])
                outcomes.append(session.receive(header, body: UnsafeRawBufferPointer(rebasing: frame[body])))
                offset += size
                if outcomes.last?.closesConnection == true { break }
            }
        }
        var answers: [(UInt32, ServerMessage)] = []
        var output: [UInt8] = []
        session.drainAnswers { output.append(contentsOf: $0) }
        output.withUnsafeBytes { raw in
            var offset = 0
            while case let .frame(header, body, size) = FrameParser.next(in: UnsafeRawBufferPointer(rebasing: raw[offset...]),
                                                                           maxFrameBytes: .max) {
                let frame = UnsafeRawBufferPointer(rebasing: raw[offset...])
                if let message = try? ServerMessage.decode(header: header, body: UnsafeRawBufferPointer(rebasing: frame[body]),
                                                           maxFrameBytes: .max) {
                    answers.append((header.requestID, message))
                }
                offset += size
            }
        }
        #expect(outcomes.map(\.kind) == answers.map { $0.1.type })
        #expect(outcomes.map(\.errorCode) == answers.map { errorCode($0.1) })
        let closes = outcomes.last?.closesConnection == true
        return (answers, closes ? .closeAfterFlush : .continue)
    }

    func errorCode(_ message: ServerMessage) -> ChecklistError.Code? {
        if case .error(let e) = message { return e.error.code }
        return nil
    }

    func hello(_ token: String?) -> Request { .hello(Hello(clientName: "t", token: token)) }

    @Test func theTokenChoosesTheNamespace() throws {
        _ = try store.createList(in: Namespace("alice"), name: "Alice's", icon: "Inbox")
        var s = session()
        let (answers, action) = exchange(&s, [(hello("alice-token"), 1), (.listLists(ListLists()), 2)])
        #expect(action == .continue && s.namespace == Namespace("alice"))
        guard case .lists(let lists) = answers[1].1 else { Issue.record("\(answers)"); return }
        #expect(lists.lists.map(\.name) == ["Alice's"])
        var bob = session()
        let (bobs, _) = exchange(&bob, [(hello("bob-token"), 1), (.listLists(ListLists()), 2)])
        guard case .lists(let none) = bobs[1].1 else { Issue.record("\(bobs)"); return }
        #expect(none.lists.isEmpty)
    }

    @Test func missingAndUnknownTokensAreRefusedThenTheConnectionCloses() {
        var s = session()
        let first = exchange(&s, [(hello(nil), 1), (.ping(Ping()), 2)])
        #expect(first.answers.map { errorCode($0.1) } == [.notAuthenticated, .helloRequired] && first.action == .continue)
        let second = exchange(&s, [(hello("alice-tokeN"), 3)])
        #expect(second.answers.map { errorCode($0.1) } == [.notAuthenticated] && second.action == .continue)
        // The third failure is answered, the frames after it are not read, and the connection closes.
        let third = exchange(&s, [(hello("guess"), 4), (hello("alice-token"), 5)])
        #expect(third.answers.map(\.0) == [4] && errorCode(third.answers[0].1) == .notAuthenticated)
        #expect(third.action == .closeAfterFlush)
    }

    @Test func aGoodTokenAfterAFailureIsAccepted() {
        var s = session()
        let (answers, action) = exchange(&s, [(hello("nope"), 1), (hello("bob-token"), 2), (.ping(Ping()), 3)])
        #expect(errorCode(answers[0].1) == .notAuthenticated && action == .continue)
        guard case .helloOK = answers[1].1, case .pong = answers[2].1 else { Issue.record("\(answers)"); return }
    }

    @Test func aRevokedTokenIsRefusedAtTheNextRequest() throws {
        var alice = session()
        var bob = session()
        _ = exchange(&alice, [(hello("alice-token"), 1)])
        _ = exchange(&bob, [(hello("bob-token"), 1)])
        access.replace(try TokenTable.parse("alice-token alice\ncarol-token carol\n"))
        // What the handler's periodic check asks, for connections that send nothing.
        #expect(alice.accessLost() == nil && bob.accessLost()?.reason == .revoked)
        let aliceAfter = exchange(&alice, [(.ping(Ping()), 2)])
        guard case .pong = aliceAfter.answers[0].1 else { Issue.record("\(aliceAfter)"); return }
        let bobAfter = exchange(&bob, [(.ping(Ping()), 2), (.ping(Ping()), 3)])
        #expect(bobAfter.answers.map(\.0) == [2] && errorCode(bobAfter.answers[0].1) == .notAuthenticated)
        #expect(bobAfter.action == .closeAfterFlush)
        // A token moved to another namespace counts as revoked too.
        access.replace(try TokenTable.parse("alice-token mallory\n"))
        #expect(exchange(&alice, [(.ping(Ping()), 4)]).action == .closeAfterFlush)
    }

    @Test func withoutAccessControlATokenIsIgnored() {
        let dispatcher = RequestDispatcher(store: store, serverName: "test", limits: .default,
                                           metrics: ServerMetrics(loops: 1, store: store))
        var s = ProtocolSession(dispatcher: dispatcher, limits: .default)
        let (answers, _) = exchange(&s, [(hello("anything"), 1)])
        guard case .helloOK = answers[0].1 else { Issue.record("\(answers)"); return }
        #expect(s.namespace == .default)
    }
}
