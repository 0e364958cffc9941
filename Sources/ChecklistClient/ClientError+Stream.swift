import ChecklistFrames
import ChecklistTLS

extension ClientError {
    /// The client's error for a TLS failure: `.certificateRejected` when a
    /// certificate did not verify (either side), `.tlsFailed` otherwise.
    init(tls error: TLSError) {
        self.init(error.code == .certificateRejected ? .certificateRejected : .tlsFailed, error.message)
    }

    /// The client's error for a failed step of a connection's frame stream.
    init(_ error: FrameStreamError) {
        switch error.code {
        case .tls:
            if let tls = error.tls { self.init(tls: tls) } else { self.init(.tlsFailed, error.message) }
        case .framing:
            self.init(.connectionClosed, "the connection was closed: the server broke framing (\(error.framing.map { "\($0)" } ?? error.message))")
        case .sendQueueFull:
            self.init(.sendQueueFull, error.message)
        case .timedOut:
            self.init(.timeout, error.message)
        case .closed:
            self.init(.connectionClosed, error.message)
        default:
            self.init(.connectionClosed, "the connection was lost: \(error.message)")
        }
    }
}
