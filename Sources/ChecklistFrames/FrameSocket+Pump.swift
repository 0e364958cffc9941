import ChecklistIO
import ChecklistModel
import ChecklistWire

extension FrameSocket {
    /// Writes all of `bytes` while reading answers at the same time (one
    /// thread, one wait for both directions), until `expected` answers
    /// have arrived. A client that wrote everything before reading could
    /// deadlock against a server that stops reading while its answers are
    /// not being read (back-pressure); this one never does.
    ///
    /// - Parameter deadline: the whole exchange must finish by then.
    public func pump(_ bytes: [UInt8], expecting expected: Int, deadline: ContinuousClock.Instant) throws -> [Answer] {
        do throws(FrameStreamError) { try stream.enqueue(bytes) } catch { throw Failure(error, "sending") }
        var answers: [Answer] = []
        answers.reserveCapacity(expected)
        while answers.count < expected {
            while let answer = try bufferedAnswer() {
                answers.append(answer)
            }
            if answers.count >= expected { break }
            do throws(FrameStreamError) {
                try stream.flush()
                let unsent = stream.queuedBytes
                try stream.wait(stream.hasPendingOutput ? [.readable, .writable] : .readable, deadline: deadline,
                                what: "\(answers.count) of \(expected) answers with \(unsent) of \(bytes.count) bytes unsent; out of time")
            } catch {
                throw Failure(error, "sending")
            }
            if try readMore(deadline: .now) == .closed {
                while let answer = try bufferedAnswer() { answers.append(answer) }
                if answers.count >= expected { break }
                throw Failure(.closed, "the server closed the connection after \(answers.count) of \(expected) answers")
            }
        }
        return answers
    }
}
