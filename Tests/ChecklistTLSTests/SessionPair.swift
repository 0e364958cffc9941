import ChecklistTesting
import ChecklistTLS
import Testing

/// A client and a server session wired back to back in memory: what one
/// side writes, the test moves to the other side's input.
final class SessionPair {
    let client: TLSSession
    let server: TLSSession
    private(set) var clientError: TLSError?
    private(set) var serverError: TLSError?

    convenience init(client: TLSClientConfiguration, server: TLSServerConfiguration, serverName: String = "localhost",
                     limits: TLSSession.Limits = TLSSession.Limits()) throws {
        try self.init(client: TLSContext(client: client), server: TLSContext(server: server), serverName: serverName,
                      limits: limits)
    }

    init(client: TLSContext, server: TLSContext, serverName: String = "localhost",
         limits: TLSSession.Limits = TLSSession.Limits()) throws {
        self.client = try TLSSession(client: client, serverName: serverName, limits: limits)
        self.server = try TLSSession(server: server, limits: limits)
    }

    /// Runs both handshakes, moving bytes both ways, until both are complete
    /// or no bytes move any more. A side that fails still gets its pending
    /// output (an alert) delivered. Returns true if both completed.
    @discardableResult
    func handshake() -> Bool {
        for _ in 0..<50 {
            step(client, &clientError)
            step(server, &serverError)
            let moved = move(from: client, to: server, &serverError) + move(from: server, to: client, &clientError)
            if client.isHandshakeComplete && server.isHandshakeComplete && moved == 0 { return true }
            if moved == 0 && (clientError != nil || serverError != nil) { break }
        }
        return clientError == nil && serverError == nil && client.isHandshakeComplete && server.isHandshakeComplete
    }

    /// Lets `session` read what it was sent (e.g. a TLS 1.3 client only
    /// learns after its handshake that the server refused its certificate).
    func readAll(_ session: TLSSession) throws -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let result = try buffer.withUnsafeMutableBytes { try session.readPlaintext(into: $0) }
            guard case .bytes(let n) = result else { return received }
            received += buffer.prefix(n)
        }
    }

    /// Sends `bytes` from `sender` to `receiver` through the bounded
    /// buffers, in as many rounds as the limits need; returns what arrived.
    func transfer(_ bytes: [UInt8], from sender: TLSSession, to receiver: TLSSession) throws -> [UInt8] {
        var offset = 0
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while offset < bytes.count || sender.pendingOutput > 0 {
            if offset < bytes.count {
                offset += try bytes[offset...].withUnsafeBytes { try sender.writePlaintext($0) }
            }
            var outgoing = [UInt8](repeating: 0, count: sender.pendingOutput)
            let n = outgoing.withUnsafeMutableBytes { sender.takeOutput(into: $0) }
            var fed = 0
            while fed < n {
                fed += try outgoing[fed..<n].withUnsafeBytes { try receiver.feed($0) }
                while case .bytes(let got) = try buffer.withUnsafeMutableBytes({ try receiver.readPlaintext(into: $0) }) {
                    received += buffer.prefix(got)
                }
            }
            outgoing.removeAll()
        }
        return received
    }

    private func step(_ session: TLSSession, _ failure: inout TLSError?) {
        guard failure == nil, !session.isHandshakeComplete else { return }
        do { _ = try session.handshake() } catch { failure = error }
    }

    /// Moves all of `sender`'s pending output into `receiver`; returns the byte count.
    private func move(from sender: TLSSession, to receiver: TLSSession, _ failure: inout TLSError?) -> Int {
        var bytes = [UInt8](repeating: 0, count: sender.pendingOutput)
        let n = bytes.withUnsafeMutableBytes { sender.takeOutput(into: $0) }
        guard n > 0, failure == nil else { return n }
        do {
            _ = try bytes.prefix(n).withUnsafeBytes { try receiver.feed($0) }
            if receiver.isHandshakeComplete { _ = try readAll(receiver) }
        } catch let error as TLSError {
            failure = error
        } catch {
            Issue.record("unexpected error \(error)")
        }
        return n
    }
}
