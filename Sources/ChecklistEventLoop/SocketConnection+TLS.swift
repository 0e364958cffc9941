import ChecklistSocket
import ChecklistTLS

/// TLS between the socket and the handler: the handshake, decrypting what
/// is read and encrypting what is sent. Loop thread only, like the rest of
/// `SocketConnection`.
///
/// The handshake is driven by the same epoll events as any read: each
/// readable event feeds what arrived to the session, runs the handshake as
/// far as it goes and sends what it produced (WANT_READ: wait for the next
/// event; WANT_WRITE cannot stay pending with memory buffers, the output is
/// simply sent). Nothing blocks the loop. A handshake that does not finish
/// within its timeout, a peer that sends plaintext or garbage, or one that
/// closes mid-handshake ends in `tlsFailed`: counted, told to the handler,
/// then the connection is aborted (after a best-effort send of OpenSSL's alert).
extension SocketConnection {
    /// Reads one chunk of ciphertext into the loop's scratch buffer and
    /// carries it as far as it goes; true if the read returned data or end-of-file.
    func readTLS() -> Bool {
        guard let tls else { return false }
        let scratch = context.tlsScratch
        let room = min(scratch.count, tls.session.inputSpace)
        guard room > 0 else {
            close()  // the session holds a full input buffer it cannot use
            return false
        }
        let result: SocketReadResult
        do throws(SocketError) {
            result = try readSocket(fd, into: UnsafeMutableRawBufferPointer(rebasing: scratch[..<room]))
        } catch {
            if !tls.isEstablished { tlsFailed(TLSConnectionFailure(.handshakeTruncated, "the peer reset the connection")) }
            else { abort() }
            return false
        }
        switch result {
        case .bytes(let count):
            context.traffic.bytesIn.add(count)
            lastInput = eventLoop.sinceOrigin
            if state == .lingering { return true }  // after our close: discarded
            do throws(TLSError) {
                _ = try tls.session.feed(UnsafeRawBufferPointer(rebasing: scratch[..<count]))
            } catch {
                tlsFailed(TLSConnectionFailure(error, established: false))
                return true
            }
            advanceTLS(tls)
            return true
        case .endOfFile:
            if state == .lingering {
                abort()
                return true
            }
            tls.session.endOfInput()
            advanceTLS(tls)
            if !isClosed && !tls.isEstablished {
                tlsFailed(TLSConnectionFailure(.handshakeTruncated, "the peer closed the connection mid-handshake"))
            } else if !isClosed && !isInputClosed {
                inputDidEnd()
            }
            return true
        case .wouldBlock:
            return false
        }
    }

    /// Runs the handshake (activating the handler when it completes), then
    /// decrypts every whole record into the input buffer and offers it to the handler.
    private func advanceTLS(_ tls: TLSTransport) {
        do throws(TLSError) {
            if !tls.isEstablished {
                while try tls.session.handshake() != .complete {
                    if tls.session.pendingOutput == 0 {  // wants input: after the flush, wait for it
                        queueFlush()
                        return
                    }
                    guard sendTLS() else { return }
                    if tls.session.pendingOutput > 0 { return }  // socket full: EPOLLOUT resumes sending
                }
                context.counters.tlsHandshakes.add(1)
                queueFlush()
                activate()
                guard isOpen else { return }
            }
            var decrypted = false
            var peerClosed = false
            while !peerClosed {
                var last = TLSSession.ReadResult.wantsInput
                let hadRoom = try input.append(limit: maxInputBytes) { free throws(TLSError) in
                    last = try tls.session.readPlaintext(into: free)
                    if case .bytes(let count) = last { return count }
                    return 0
                }
                guard hadRoom else {
                    close()  // full at the input limit, as for plaintext
                    return
                }
                switch last {
                case .bytes(let count):
                    decrypted = true
                    guard decodeWebSocketInput(lastBytes: count) else { return }
                case .wantsInput: peerClosed = tls.session.inputEnded
                case .closed: peerClosed = true
                }
                if case .wantsInput = last { break }
            }
            if tls.session.pendingOutput > 0 { queueFlush() }
            if decrypted { deliverInput() }
            if peerClosed && !isClosed && !isInputClosed { inputDidEnd() }
        } catch {
            // After the handshake, a stream cut without close_notify is just
            // the end of input (frames delimit themselves); anything else is a failure.
            if tls.isEstablished && error.code == .truncated {
                if !isInputClosed { inputDidEnd() }
            } else {
                tlsFailed(TLSConnectionFailure(error, established: tls.isEstablished))
            }
        }
    }

    /// The TLS part of `flush`: encrypts pending plaintext and sends the
    /// ciphertext until the socket is full or nothing is left. False if the
    /// connection was aborted.
    func sendTLS() -> Bool {
        guard let tls else { return true }
        let scratch = context.tlsScratch
        while true {
            let sent: (sent: Int, blocked: Bool)
            do throws(SocketError) {
                sent = try tls.send(fd: fd, scratch: scratch)
            } catch {
                abort()  // EPIPE, ECONNRESET: the peer is gone
                return false
            }
            if sent.sent > 0 {
                context.traffic.bytesOut.add(sent.sent)
                outputWaiting = nil
            }
            waitingForWritable = sent.blocked
            if sent.blocked || outputSent == output.count || !tls.isEstablished || tls.session.closeSent { break }
            do throws(TLSError) {
                let sentSoFar = outputSent
                let taken: Result<Int, TLSError> = output.withUnsafeBytes { raw in
                    Result { () throws(TLSError) in
                        try tls.session.writePlaintext(UnsafeRawBufferPointer(rebasing: raw[sentSoFar...]))
                    }
                }
                let count = try taken.get()
                outputSent += count
                if count == 0 && tls.session.pendingOutput == 0 { break }
            } catch {
                tlsFailed(TLSConnectionFailure(error, established: true))
                return false
            }
        }
        if pendingOutputBytes > 0 && outputWaiting == nil { outputWaiting = eventLoop.sinceOrigin }
        return true
    }

    /// Queues close_notify and sends it if the socket takes it now (best effort).
    func sendCloseNotify() {
        guard let tls, tls.isEstablished else { return }
        tls.session.close()
        _ = try? tls.send(fd: fd, scratch: context.tlsScratch)
    }

    /// Tick: closes a connection whose handshake took too long.
    func checkHandshakeDeadline(now: ContinuousClock.Instant) {
        guard let tls, !tls.isEstablished, now - connectedAt >= tls.handshakeTimeout else { return }
        let timeout = tls.handshakeTimeout
        tlsFailed(TLSConnectionFailure(.handshakeTimeout, "the TLS handshake did not complete within \(timeout)"))
    }

    /// Counts the failure, tells the handler, sends OpenSSL's alert if the
    /// socket takes it at once, and aborts.
    func tlsFailed(_ failure: TLSConnectionFailure) {
        guard !isClosed else { return }
        context.counters.countTLSFailure(failure.reason)
        callHandler { $0.connectionTLSFailed(self, failure) }
        if let tls { _ = try? tls.send(fd: fd, scratch: context.tlsScratch) }
        abort()
    }
}
