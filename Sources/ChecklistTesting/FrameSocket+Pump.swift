import ChecklistModel
import ChecklistSocket
import ChecklistWire
#if canImport(Glibc)
import Glibc
#endif

extension FrameSocket {
    /// Writes all of `bytes` while reading answers at the same time (one
    /// thread, `poll(2)`), until `expected` answers have arrived. A client
    /// that wrote everything before reading could deadlock against a server
    /// that stops reading while its answers are not being read
    /// (back-pressure); this one never does.
    ///
    /// - Parameter deadline: the whole exchange must finish by then.
    public func pump(_ bytes: [UInt8], expecting expected: Int, deadline: ContinuousClock.Instant) throws -> [Answer] {
        try setNonBlocking(fd, true)
        defer { try? setNonBlocking(fd, false) }
        var answers: [Answer] = []
        answers.reserveCapacity(expected)
        var written = 0
        while answers.count < expected {
            while let answer = try bufferedAnswer() {
                answers.append(answer)
            }
            if answers.count >= expected { break }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else {
                throw Failure(.timedOut, "\(answers.count) of \(expected) answers after sending \(written) of \(bytes.count) bytes; out of time")
            }
            var events = Int16(POLLIN)
            if written < bytes.count || tls?.hasPendingOutput == true { events |= Int16(POLLOUT) }
            var pfd = pollfd(fd: fd, events: events, revents: 0)
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = poll(&pfd, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            if pfd.revents & Int16(POLLOUT) != 0, let tls {
                // Encrypt the next piece once the last one's ciphertext is out.
                try tls.writePendingWithoutWaiting()
                if !tls.hasPendingOutput && written < bytes.count {
                    written += try bytes.withUnsafeBytes { raw in try tls.encrypt(UnsafeRawBufferPointer(rebasing: raw[written...])) }
                    try tls.writePendingWithoutWaiting()
                }
            } else if pfd.revents & Int16(POLLOUT) != 0 && written < bytes.count {
                let result = try bytes.withUnsafeBytes { raw -> SocketWriteResult in
                    do {
                        return try writeSocket(fd, from: UnsafeRawBufferPointer(rebasing: raw[written...]))
                    } catch {
                        throw Failure("sending failed after \(written) bytes: \(error)")
                    }
                }
                if case .bytes(let n) = result { written += n }
            }
            if pfd.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                switch try readMore() {
                case .data, .timedOut: continue
                case .closed:
                    while let answer = try bufferedAnswer() { answers.append(answer) }
                    throw Failure(.closed, "the server closed the connection after \(answers.count) of \(expected) answers")
                }
            }
        }
        return answers
    }
}
