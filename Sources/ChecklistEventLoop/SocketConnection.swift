#if canImport(Glibc)
import Glibc
#endif
import ChecklistSocket
import ChecklistTLS

/// One accepted TCP connection, owned by one event loop for its whole life.
///
/// Threading: every method and property must be used on `eventLoop`'s thread
/// (asserted in debug builds); that single owner is why the class needs no
/// lock and is not `Sendable`. From another thread, go through
/// `handle.execute { connection in ... }` (or keep a `LoopBound`).
///
/// Output: `write` (`SocketConnection+Output.swift`) appends to an output
/// buffer; the loop sends it with one `send` at the end of the current event
/// batch, and again on `EPOLLOUT` when the socket was full. Back-pressure: above `outputHighWaterMark` pending
/// bytes the connection stops reading until the output drains to
/// `outputLowWaterMark`; above `maxOutputBytes` the peer is taken to have
/// stopped reading and the connection is aborted.
///
/// Closing: `close()` stops reading, sends what is pending (for at most
/// `closeTimeout`), shuts down our sending side and lingers until the peer
/// closes (at most `lingerTimeout`); `abort()` closes at once.
///
/// TLS: on a TLS port (`tls` set) the socket carries ciphertext. The
/// handshake runs first, driven by epoll like any read (`SocketConnection+TLS.swift`);
/// the handler is told `connectionActive` only once it is complete. After it,
/// ciphertext read from the socket is decrypted into the same input buffer
/// and output is encrypted as it is sent, so handlers see plaintext only.
///
/// Answers made elsewhere: while the handler awaits an answer made off the
/// loop (`beginAwaitingAnswer`), the connection reads nothing and a graceful
/// close waits for that answer (`endAwaitingAnswer`).
public final class SocketConnection {
    /// Unique per server, increasing in accept order.
    public let id: UInt64
    /// The peer as `"host:port"` (`"[v6]:port"` for IPv6).
    public let peer: String
    public let eventLoop: EventLoop
    /// Accepted beyond `maxConnections`: closed right after `connectionActive`.
    public let isOverConnectionLimit: Bool
    /// When the connection was accepted.
    public let connectedAt: ContinuousClock.Instant
    /// When bytes last arrived (event-batch precision); for idle timeouts.
    public var lastInputAt: ContinuousClock.Instant { eventLoop.origin + lastInput }
    /// Since when pending output has been waiting without any of it being
    /// sent (it became pending, or a send last made progress); nil while
    /// nothing is pending. For timing out a peer that stopped reading.
    public var outputWaitingSince: ContinuousClock.Instant? { outputWaiting.map { eventLoop.origin + $0 } }
    /// `lastInputAt` and `outputWaitingSince` as times since the loop's
    /// origin (`EventLoop.sinceOrigin`): a `Duration` is two plain integers,
    /// while each copy or test of a `ContinuousClock.Instant` (a resilient
    /// type) goes through the runtime, and these are set per request.
    var lastInput: Duration
    var outputWaiting: Duration?
    /// Unconsumed input allowed before the connection is closed. Handlers set
    /// it from their maximum frame size.
    public var maxInputBytes: Int {
        get { inputLimit }
        set { inputLimit = newValue }
    }
    /// `maxInputBytes`, kept internal so that the compiler sees every access
    /// (and proves them exclusive statically: it cannot for a public stored
    /// property, which other modules may reach).
    var inputLimit: Int

    package let fd: Int32
    package let limits: ConnectionLimits
    let context: ServerLoopContext
    var handler: (any SocketConnectionHandler)?
    /// The TLS layer, on a TLS port.
    let tls: TLSTransport?
    /// The WebSocket layer, once a web port's connection is upgraded (`SocketConnection+WebSocket.swift`).
    var webSocket: WebSocketTransport?
    /// Set for a connection to a web port: it speaks HTTP until upgraded.
    public internal(set) var webPortSettings: WebSocketSettings?
    /// The handler was told `connectionActive` (for TLS: the handshake is done).
    package private(set) var isActive = false

    var input = InputBuffer()
    /// Bytes `[outputSent..<output.count]` are pending (plaintext, on a TLS port).
    var output: [UInt8] = []
    var outputSent = 0

    package enum State {
        case open
        /// `close()` was called: flushing output (until `stateDeadline`), not reading.
        case closing
        /// Output sent and our side shut down: discarding input until the
        /// peer closes (or `stateDeadline` passes).
        case lingering
        case closed
    }
    /// Tested on every request: a plain enum (the deadlines are kept apart,
    /// in `stateDeadline`).
    private(set) var state = State.open
    /// When a `closing` or `lingering` connection is aborted.
    private var stateDeadline: ContinuousClock.Instant
    /// The peer shut down its sending side.
    public var isInputClosed: Bool { inputClosed }
    /// `isInputClosed`, internal for the reason given at `inputLimit`.
    var inputClosed = false
    /// Reading stopped because output is above the high-water mark.
    private var readPaused = false
    /// The last send was short: waiting for `EPOLLOUT`.
    var waitingForWritable = false
    /// The handler left input unconsumed while output was pending: offer it
    /// again once output drains to the low-water mark, even if no new bytes arrive.
    private var redeliverWhenDrained = false
    private var registeredInterest: UInt32
    /// Queued in the loop's end-of-batch flush list.
    private var flushQueued = false
    /// Handler calls (and `withOutputBuffer`s) in progress on the stack. While
    /// non-zero, closing does not free buffers or call `connectionClosed`.
    var callbackDepth = 0
    /// Answers the handler is having made off the loop (`beginAwaitingAnswer`).
    private(set) var awaitedAnswers = 0
    /// A graceful close asked for while answers were awaited: carried out
    /// when the last one is written, or an abort once this deadline passes.
    private var deferredCloseDeadline: ContinuousClock.Instant?
    private var closeNotificationPending = false

    package init(fd: Int32, id: UInt64, peer: String, overLimit: Bool, context: ServerLoopContext,
                 tls: TLSTransport? = nil) {
        self.fd = fd
        self.tls = tls
        self.id = id
        self.peer = peer
        self.eventLoop = context.loop
        self.isOverConnectionLimit = overLimit
        self.context = context
        self.limits = context.limits
        self.inputLimit = context.limits.maxInputBytes
        self.connectedAt = context.loop.now
        self.lastInput = context.loop.sinceOrigin
        self.stateDeadline = connectedAt
        self.registeredInterest = EpollMask.input
    }

    // MARK: Public state

    /// Bytes written but not yet accepted by the kernel (on a TLS port:
    /// plaintext not yet encrypted plus ciphertext not yet sent).
    public var pendingOutputBytes: Int { output.count - outputSent + (tls?.pendingCiphertext ?? 0) }

    /// The connection came in on a TLS port.
    public var isTLS: Bool { tls != nil }

    /// The subject of the client's verified TLS certificate (RFC 2253, e.g.
    /// `CN=alice,O=Example`), or nil: no TLS, no certificate, or the
    /// handshake is not complete.
    public var tlsPeerSubject: String? { tls?.session.peerCertificateSubject }

    /// The negotiated TLS version, once the handshake is complete.
    public var tlsVersion: TLSVersion? { tls?.session.protocolVersion }

    /// Unconsumed input bytes held for the handler.
    public var pendingInputBytes: Int { input.readableCount }

    /// Pending output is above the high-water mark (reading has stopped or
    /// will stop after this batch). A handler may stop consuming input on
    /// this, or on any budget of its own: input left unconsumed while output
    /// is pending is offered again once the output drains to the low-water
    /// mark, even if no new bytes arrive.
    public var isOutputBacklogged: Bool { pendingOutputBytes > limits.outputHighWaterMark }

    /// Neither `close()` nor `abort()` has been called (or a `close()` waits
    /// for an awaited answer, `beginAwaitingAnswer`) and the peer has not
    /// reset the connection: writes are accepted.
    public var isOpen: Bool {
        state == .open
    }

    /// The descriptor is closed.
    public var isClosed: Bool {
        state == .closed
    }

    /// A `Sendable` reference for other threads.
    public var handle: SocketConnectionHandle {
        eventLoop.assertInEventLoop()
        return SocketConnectionHandle(connection: self)
    }

    // MARK: Closing

    /// Closes gracefully: stops reading, sends pending output (for at most
    /// `closeTimeout`), then closes. Further writes are ignored.
    public func close() {
        eventLoop.assertInEventLoop()
        close(deadline: eventLoop.now + limits.closeTimeout)
    }

    /// `close()` with an explicit deadline for the flush (server shutdown).
    package func close(deadline: ContinuousClock.Instant) {
        if let tls, !tls.isEstablished {
            abort()  // mid-handshake: nothing can be said to the peer yet
            return
        }
        switch state {
        case .open where awaitedAnswers > 0:
            deferredCloseDeadline = min(deferredCloseDeadline ?? deadline, deadline)
        case .open:
            if webSocket != nil { webSocketWillClose() }
            state = .closing
            stateDeadline = deadline
            updateInterest()
            queueFlush()
        case .closing where deadline < stateDeadline:
            stateDeadline = deadline
        default:
            break
        }
    }

    /// Offers the unconsumed input to the handler again once pending output
    /// is at or below the low-water mark (at the end of this event batch if
    /// it already is), even if no new bytes arrive. For a handler that held
    /// input back for a reason of its own (answers waiting elsewhere, a
    /// request limit) and can take more now; input held back while output is
    /// pending is offered again without this.
    public func offerInputAgain() {
        eventLoop.assertInEventLoop()
        guard isOpen, input.readableCount > 0 else { return }
        redeliverWhenDrained = true
        queueFlush()
    }

    /// The handler has read a request whose answer is being made off the
    /// loop (e.g. by a worker thread), and will write it later on the loop,
    /// then call `endAwaitingAnswer()`. Until then the connection reads
    /// nothing and offers the handler no input: requests behind it wait in
    /// the socket's buffers (answers keep their order, memory stays bounded).
    /// A graceful close asked for meanwhile (`close()`, server shutdown)
    /// waits, so that the answer can still be written, but not past its
    /// deadline (the connection is then aborted). `abort()` and the peer's
    /// reset are not delayed: the handler then learns of the close as usual
    /// and drops the answer when it comes.
    public func beginAwaitingAnswer() {
        eventLoop.assertInEventLoop()
        awaitedAnswers += 1
        updateInterest()
    }

    /// The awaited answer is written (or will never be): reading resumes and
    /// held input is offered to the handler again, or a graceful close asked
    /// for meanwhile goes ahead (after the output is sent, as usual).
    public func endAwaitingAnswer() {
        eventLoop.assertInEventLoop()
        precondition(awaitedAnswers > 0, "endAwaitingAnswer without beginAwaitingAnswer")
        awaitedAnswers -= 1
        guard awaitedAnswers == 0, isOpen else { return }
        if let deadline = deferredCloseDeadline {
            deferredCloseDeadline = nil
            close(deadline: deadline)
            return
        }
        updateInterest()
        if input.readableCount > 0 {
            redeliverWhenDrained = true
            queueFlush()
        }
    }

    /// Closes now, dropping pending output.
    public func abort() {
        eventLoop.assertInEventLoop()
        guard !isClosed else { return }
        state = .closed
        eventLoop.deregister(fd)
        closeSocket(fd)
        context.connectionDidClose(self)
        closeNotificationPending = true
        if callbackDepth == 0 { deliverCloseNotification() }
    }

    private func deliverCloseNotification() {
        guard closeNotificationPending else { return }
        closeNotificationPending = false
        let handler = self.handler
        self.handler = nil  // break the connection <-> handler cycle
        callbackDepth += 1
        handler?.connectionClosed(self)
        callbackDepth -= 1
        input.clear()
        input.releaseIfEmpty()
        output = []
        outputSent = 0
    }

    // MARK: Handler calls

    /// Tells the handler the connection is active (for TLS, once the
    /// handshake is done); an over-limit connection is closed right after.
    package func activate() {
        guard !isActive, isOpen else { return }
        isActive = true
        callHandler { $0.connectionActive(self) }
        if isOverConnectionLimit { close() }
    }

    /// Calls the handler, deferring a close it causes until it returns.
    package func callHandler(_ body: (any SocketConnectionHandler) -> Void) {
        guard let handler else { return }
        callbackDepth += 1
        body(handler)
        callbackDepth -= 1
        callbackDidReturn()
    }

    func callbackDidReturn() {
        if callbackDepth == 0 && closeNotificationPending { deliverCloseNotification() }
    }

    // MARK: Events (loop thread)

    package func handleEvents(_ events: UInt32) {
        if events & EpollMask.error != 0 {
            abort()
            return
        }
        if events & EpollMask.output != 0 && waitingForWritable {
            waitingForWritable = false
            flush()
        }
        let readable = events & (EpollMask.input | EpollMask.hangUp) != 0
        var gotInput = false
        if readable && wantsInput {
            gotInput = tls == nil ? readOnce() : readTLS()
        }
        // Hang-up with nothing left to read: the peer is gone both ways.
        if events & EpollMask.hangUp != 0 && !gotInput && !isClosed {
            abort()
        }
    }

    /// Reads one chunk and hands it on; true if the read returned data or end-of-file.
    private func readOnce() -> Bool {
        let result: SocketReadResult?
        do throws(SocketError) {
            result = try input.read(from: fd, limit: maxInputBytes)
        } catch {
            abort()
            return false
        }
        switch result {
        case .bytes(let count)?:
            context.traffic.bytesIn.add(count)
            lastInput = eventLoop.sinceOrigin
            if state == .lingering {
                input.clear()
            } else if decodeWebSocketInput(lastBytes: count) {
                deliverInput()
            }
            return true
        case .endOfFile?:
            inputDidEnd()
            return true
        case .wouldBlock?:
            return false
        case nil:
            close()  // full at the input limit
            return false
        }
    }

    /// The peer's stream ended (end of file; for TLS also close_notify).
    func inputDidEnd() {
        inputClosed = true
        if state == .lingering {
            abort()
            return
        }
        updateInterest()
        callHandler { $0.connectionInputClosed(self) }
    }

    /// Offers all unconsumed input to the handler (not while it awaits an
    /// answer: `endAwaitingAnswer` offers it then).
    func deliverInput() {
        guard isOpen, awaitedAnswers == 0, input.readableCount > 0, let handler else { return }
        callbackDepth += 1
        let available = input.readableCount
        let consumed = handler.connectionReadable(self, input.readable)
        callbackDepth -= 1
        precondition(consumed >= 0 && consumed <= available,
                     "connectionReadable returned \(consumed), but \(available) bytes were offered")
        input.consume(consumed)
        if isOpen {
            if input.readableCount > maxInputBytes {
                close()
            } else {
                // Bytes left while output is pending may be requests the
                // handler held back for back-pressure (by any budget it likes):
                // offer them again once the output drains, since no new bytes
                // may ever arrive to trigger a read. (If they are just a
                // partial frame, the extra call costs one header check.)
                redeliverWhenDrained = input.readableCount > 0 && pendingOutputBytes > 0
            }
        }
        callbackDidReturn()
        if webSocket != nil { decodeWebSocketBacklog() }
    }

    var wantsInput: Bool {
        switch state {
        case .open: return !isInputClosed && !readPaused && awaitedAnswers == 0
        case .lingering: return !isInputClosed
        case .closing, .closed: return false
        }
    }

    func queueFlush() {
        if outputWaiting == nil && pendingOutputBytes > 0 { outputWaiting = eventLoop.sinceOrigin }
        guard !flushQueued else { return }
        flushQueued = true
        eventLoop.scheduleFlush(self)
    }

    /// The loop's end-of-batch flush.
    package func flushScheduled() {
        flushQueued = false
        flush()
    }

    /// Sends pending output (one `send`), then applies the output limits,
    /// back-pressure and a pending graceful close.
    private func flush() {
        switch state {
        case .open, .closing: break
        case .lingering, .closed: return
        }
        if tls != nil {
            guard sendTLS() else { return }
        } else if pendingOutputBytes > 0 && !waitingForWritable {
            let result: Result<SocketWriteResult, SocketError> = output.withUnsafeBytes { raw in
                do throws(SocketError) {
                    return .success(try writeSocket(fd, from: UnsafeRawBufferPointer(rebasing: raw[outputSent...])))
                } catch {
                    return .failure(error)
                }
            }
            switch result {
            case .success(.bytes(let count)):
                outputSent += count
                context.traffic.bytesOut.add(count)
                outputWaiting = pendingOutputBytes > 0 ? eventLoop.sinceOrigin : nil
            case .success(.wouldBlock):
                break
            case .failure:
                abort()  // EPIPE, ECONNRESET: the peer is gone
                return
            }
            waitingForWritable = pendingOutputBytes > 0
        }
        compactOutput()
        let pending = pendingOutputBytes
        if pending > limits.maxOutputBytes {
            context.counters.droppedForOutput.add(1)
            abort()
            return
        }
        var pausedNow = false
        if pending > limits.outputHighWaterMark {
            pausedNow = !readPaused
            if pausedNow { context.counters.readPauses.add(1) }
            readPaused = true
        } else if pending <= limits.outputLowWaterMark {
            readPaused = false
        }
        if state == .closing, pending == 0 {
            finishClosing()
            return
        }
        updateInterest()
        if pausedNow { callHandler { $0.connectionPausedReading(self) } }
        if redeliverWhenDrained && pendingOutputBytes <= limits.outputLowWaterMark {
            redeliverWhenDrained = false
            deliverInput()
        }
    }

    /// The largest output buffer kept once everything in it is sent: room
    /// for a batch of pipelined answers (ten 100-row pages), so that busy
    /// connections reuse their buffers; idle ones give them back at the
    /// next tick.
    static let keptOutputCapacity = 128 << 10

    func compactOutput() {
        if outputSent == output.count {
            // Keep the buffer for the next replies (`write(taking:)` hands it
            // back to the handler); return big ones.
            if output.capacity > Self.keptOutputCapacity { output = [] } else { output.removeAll(keepingCapacity: true) }
            outputSent = 0
        } else if outputSent >= 64 << 10 && outputSent * 2 >= output.count {
            output.removeFirst(outputSent)
            outputSent = 0
        }
    }

    /// Output is sent: shut down our side and linger, or close at once if the
    /// peer already closed its side.
    private func finishClosing() {
        if isInputClosed {
            abort()
            return
        }
        if tls != nil { sendCloseNotify() }
        do throws(SocketError) {
            try shutdownSocket(fd, .write)
        } catch {
            abort()
            return
        }
        input.clear()
        state = .lingering
        stateDeadline = eventLoop.now + limits.lingerTimeout
        updateInterest()
    }

    func updateInterest() {
        guard !isClosed else { return }
        var wanted: UInt32 = wantsInput ? EpollMask.input : 0
        if waitingForWritable, state == .open || state == .closing { wanted |= EpollMask.output }
        guard wanted != registeredInterest else { return }
        do throws(SocketError) {
            try eventLoop.reregister(fd, interest: wanted)
            registeredInterest = wanted
        } catch {
            abort()
        }
    }

    // MARK: Tick (loop thread)

    /// Enforces close deadlines, tells the handler, and returns idle buffers.
    package func tick(now: ContinuousClock.Instant) {
        switch state {
        case .closing, .lingering:
            if now >= stateDeadline { abort() }
            return
        case .closed:
            return
        case .open:
            if let deadline = deferredCloseDeadline, now >= deadline {
                abort()  // the awaited answer took longer than the close allows
                return
            }
            guard isActive else {
                checkHandshakeDeadline(now: now)
                return
            }
            if webSocket != nil {
                tickWebSocket(now: now)
                guard isOpen else { return }
            }
            callHandler { $0.connectionTick(self, now: now) }
        }
        guard callbackDepth == 0, !isClosed else { return }
        // Idle for a whole tick: hand the receive buffer back (thousands of
        // quiet connections should cost no buffer memory); busy ones keep a
        // small one so steady traffic allocates nothing.
        let idle = now - lastInputAt >= limits.tickInterval
        input.releaseIfEmpty(keeping: idle ? 0 : InputBuffer.initialCapacity)
        if pendingOutputBytes == 0 && output.capacity > (idle ? 0 : 4096) { output = [] }
    }
}

extension SocketConnection: Selectable {
    package func loopWillClose() { abort() }
}

extension SocketConnection: CustomStringConvertible {
    public var description: String { "SocketConnection(\(id), \(peer))" }
}
