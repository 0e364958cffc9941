import ChecklistIO
import ChecklistSocket
import ChecklistTLS

extension FrameStream {
    /// Moves the TLS handshake on as far as the bytes received allow: the
    /// session's step, its messages written as far as the socket takes
    /// them (the rest waits: `hasPendingOutput`), one socket read when it
    /// wants input. Returns true once the handshake is complete (at once
    /// for a plaintext stream); false when it waits for the peer.
    ///
    /// - Throws: `FrameStreamError` `.tls` (a certificate that did not
    ///   verify, an alert, a peer that does not speak TLS), `.closed` when
    ///   the peer hangs up first, `.socket`. The alert that says why is sent
    ///   if the socket takes it at once.
    public func advanceHandshake() throws(FrameStreamError) -> Bool {
        guard let tls else { return true }
        do throws(FrameStreamError) {
            var ended = false
            while true {
                let progress: TLSSession.HandshakeProgress
                do throws(TLSError) { progress = try tls.session.handshake() } catch { throw FrameStreamError(error) }
                try flush()
                switch progress {
                case .complete:
                    _ = try takePlaintext()  // records that came with the last handshake message
                    return true
                case .wantsOutputTaken:
                    continue
                case .wantsInput:
                    if ended { throw FrameStreamError(.closed, "the peer closed the connection during the TLS handshake") }
                    let received: TLSSocketStream.Received
                    do throws(TLSSocketStream.Failure) {
                        received = try tls.receive(using: scratch!)
                    } catch {
                        throw FrameStreamError(error)
                    }
                    switch received {
                    case .wouldBlock: return false
                    case .fed: continue
                    case .endOfFile: ended = true  // the session fails the next step (truncated)
                    }
                }
            }
        } catch {
            tls.writePendingWithoutWaiting()  // the alert that says why, if any
            throw error
        }
    }

    /// Runs the TLS handshake to its end, waiting for the socket (at most
    /// until `deadline`): for a user on a thread of its own.
    ///
    /// - Throws: as `advanceHandshake`, and `.timedOut` at the deadline.
    public func handshake(deadline: ContinuousClock.Instant?) throws(FrameStreamError) {
        while try !advanceHandshake() {
            try wait(hasPendingOutput ? [.readable, .writable] : .readable, deadline: deadline,
                     what: "the TLS handshake got no answer in time")
        }
    }

    /// Waits until the socket is ready for `interest` (errors and hang-ups
    /// count as ready: the next step reports them).
    ///
    /// - Throws: `.timedOut` ("`what`") at `deadline`; `.socket` if the
    ///   wait itself fails.
    public func wait(_ interest: ReadinessInterest, deadline: ContinuousClock.Instant?,
                     what: @autoclosure () -> String) throws(FrameStreamError) {
        let ready: ReadinessEvents?
        do throws(SocketError) {
            ready = try waitForSocket(fd, interest, deadline: deadline)
        } catch {
            throw FrameStreamError(error)
        }
        if ready == nil { throw FrameStreamError(.timedOut, what()) }
    }
}
