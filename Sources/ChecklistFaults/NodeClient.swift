import ChecklistModel
import ChecklistSocket
import ChecklistTesting
import ChecklistWire

/// One client connection to one node, over the tests' blocking
/// `FrameSocket`: requests numbered from 2 (1 is the HELLO), answers
/// matched by request id, pushes (request id 0) kept aside in order.
/// Every wait is bounded: the HELLO by `connectTimeout`, each answer by the
/// timeout given to `request`.
final class NodeClient {
    /// Why a request got no answer.
    enum Lost: Error {
        /// The connection closed or broke, or the answer did not come in time.
        case noAnswer(String)
    }

    let node: Int
    private let socket: FrameSocket
    private var nextID: UInt32 = 2
    /// Pushes received while waiting for answers, oldest first.
    private(set) var pushes: [ServerMessage] = []

    /// Connects and says HELLO; nil when the node cannot be reached or does
    /// not answer in time (down, paused, shutting down).
    init?(node: Int, port: UInt16, name: String, connectTimeout: Duration = .seconds(2)) {
        guard let socket = try? FrameSocket(host: "127.0.0.1", port: port, timeout: connectTimeout),
              (try? socket.handshake(features: [], name: name)) != nil else { return nil }
        self.node = node
        self.socket = socket
    }

    /// Sends `request` and waits up to `timeout` for its answer (pushes that
    /// come first are kept in `pushes`).
    func request(_ request: Request, timeout: Duration) throws(Lost) -> ServerMessage {
        let id = nextID
        nextID += 1
        do {
            socket.timeout = timeout
            try socket.send(request, id: id)
        } catch {
            throw .noAnswer("send failed: \(error)")
        }
        let deadline = ContinuousClock.now + timeout
        while true {
            let answer: FrameSocket.Answer
            do {
                answer = try socket.receive()
            } catch let failure as FrameSocket.Failure where failure.code == .timedOut {
                throw .noAnswer("no answer within \(timeout)")
            } catch {
                throw .noAnswer("\(error)")
            }
            if case .error(let e) = answer.message, e.error.code == .shuttingDown, answer.header.requestID != id {
                // The node's goodbye (request id 0): what it had read is answered, this was not.
                throw .noAnswer("SHUTTING_DOWN (request id \(answer.header.requestID))")
            } else if answer.header.requestID == 0 {
                pushes.append(answer.message)
            } else if answer.header.requestID == id {
                return answer.message
            }
            if ContinuousClock.now > deadline { throw .noAnswer("no answer within \(timeout)") }
        }
    }

    /// Waits up to `timeout` for the next push; nil when none came in time.
    func nextPush(timeout: Duration) throws(Lost) -> ServerMessage? {
        if !pushes.isEmpty { return pushes.removeFirst() }
        do {
            socket.timeout = timeout
            let answer = try socket.receive()
            return answer.message
        } catch let failure as FrameSocket.Failure where failure.code == .timedOut {
            return nil
        } catch {
            throw .noAnswer("\(error)")
        }
    }

    /// Takes the pushes kept so far.
    func takePushes() -> [ServerMessage] {
        defer { pushes = [] }
        return pushes
    }

    func close() { socket.close() }
}

/// The `Outcome` of an answer to a request.
extension Outcome {
    init(_ message: ServerMessage) {
        switch message {
        case .patchOK(let ok): self = .patchOK(revision: ok.revision, ids: ok.ids)
        case .page(let page): self = .page(page)
        case .changes(let changes): self = .changes(changes)
        case .error(let e): self = .failed(code: e.error.code.rawValue, revision: e.error.revision, message: e.error.message)
        default: self = .indeterminate("unexpected answer \(message.type)")
        }
    }
}
