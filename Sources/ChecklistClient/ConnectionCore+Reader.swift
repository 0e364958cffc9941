import ChecklistFrames
import ChecklistModel
import ChecklistWire

extension ConnectionCore {
    /// Dispatches every whole frame `stream` received. Returns the reason
    /// to close when the server broke framing.
    func dispatchFrames(from stream: FrameStream) -> ClientError? {
        do throws(FrameStreamError) {
            while try stream.nextFrame(maxFrameBytes: receiveLimit, dispatch) != nil {}
            return nil
        } catch {
            return ClientError(error)
        }
    }

    func endOfStreamReason() -> ClientError {
        if let goodbye = state.withLock({ $0.goodbye }) {
            return ClientError(.connectionClosed, "the server closed the connection: \(goodbye)")
        }
        return ClientError(.connectionClosed, "the server closed the connection")
    }

    /// Hands one frame to whoever waits for it.
    private func dispatch(_ header: FrameHeader, _ body: UnsafeRawBufferPointer) {
        if header.requestID == FrameHeader.pushRequestID {
            dispatchPush(header, body)
            return
        }
        if let handler = state.withLock({ $0.table.takeRawHandler(header.requestID) }) {
            handler(.success((header, body)))
            return
        }
        let result: Result<ServerMessage, ClientError>
        do {
            result = .success(try ServerMessage.decode(header: header, body: body, maxFrameBytes: receiveLimit))
        } catch {
            result = .failure(ClientError(.protocolViolation,
                                          "cannot decode the answer to request \(header.requestID) (type \(header.type)): \(error)"))
        }
        state.withLock { $0.table.deliver(header.requestID, result) }.run()
    }

    /// A frame with request id 0: a connection-level ERROR (kept as the
    /// reason for an imminent close) or a push for the push handler.
    private func dispatchPush(_ header: FrameHeader, _ body: UnsafeRawBufferPointer) {
        if header.type == .error,
           case .error(let message)? = try? ServerMessage.decode(header: header, body: body, maxFrameBytes: receiveLimit) {
            state.withLock { $0.goodbye = message.error }
        }
        if let handler = state.withLock({ $0.pushHandler }) {
            handler(header, Array(body))
        }
    }
}
