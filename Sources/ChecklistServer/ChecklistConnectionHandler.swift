import ChecklistModel
import ChecklistWire

/// Connects one socket to its protocol session: bytes in, frames out.
/// Runs only on its connection's event-loop thread.
final class ChecklistConnectionHandler: ConnectionHandler {
    private var session: ConnectionSession
    private let outputHighWater: Int

    init(dispatcher: RequestDispatcher, limits: Limits, outputHighWater: Int) {
        session = ConnectionSession(dispatcher: dispatcher, limits: limits)
        self.outputHighWater = outputHighWater
    }

    func connectionActive(_ connection: Connection) {
        // The parser refuses an over-limit length from its 4-byte prefix, so
        // the input never needs to hold more than one maximal frame.
        connection.maxInputBytes = Int(session.maxFrameBytes) + FrameHeader.size + 64 * 1024
        if connection.isOverConnectionLimit {
            sendConnectionError(ChecklistError(.limitExceeded, "server is at its connection limit", field: "connections"),
                                to: connection)
        }
    }

    func connectionReadable(_ connection: Connection, _ input: UnsafeRawBufferPointer) -> Int {
        let budget = outputHighWater - connection.pendingOutputBytes
        guard budget > 0 else { return 0 }
        let (consumed, action) = session.receive(input, outputBudget: budget)
        if session.output.count > 0 {
            session.output.bytes.withUnsafeBytes { connection.write($0) }
            session.output.reset()
        }
        if action == .closeAfterFlush { connection.close() }
        return consumed
    }

    /// The goodbye of Protocol/SPEC.md section 1: after the answers already
    /// owed, ERROR SHUTTING_DOWN with request id 0; the server then closes.
    func connectionShuttingDown(_ connection: Connection) {
        sendConnectionError(ChecklistError(.shuttingDown, "the server is shutting down"), to: connection)
    }

    /// Writes a connection-level ERROR (request id 0).
    private func sendConnectionError(_ error: ChecklistError, to connection: Connection) {
        var w = WireWriter()
        var encoder = FrameEncoder()
        encoder.append(ErrorMessage(error), requestID: FrameHeader.pushRequestID, to: &w)
        connection.write(w.bytes)
    }
}
