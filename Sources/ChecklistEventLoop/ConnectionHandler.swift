// ChecklistEventLoop: the epoll loops, connections, timers, signal handling
// and the TCP server. It knows no protocol and no store (as swift-nio keeps
// NIOPosix apart from any protocol): a server plugs its protocol in as a
// `ConnectionHandler` per connection.
//
// TLS sits between the socket and the handler: on a TLS port `Connection`
// runs the handshake before the handler is told `connectionActive`, then
// decrypts what it reads into the input buffer and encrypts what it sends
// (Connection+TLS.swift), so that the frame parser and every handler stay
// as they are.

/// Protocol logic for one connection. A `TCPServer` makes one handler per
/// connection (with its `handlerFactory`) and calls it only on that
/// connection's event loop thread, never re-entrantly for the same connection
/// (a close requested inside a callback is reported after it returns).
///
/// Handlers hold no socket: they read from the buffer they are given and
/// answer through `connection.write` / `withOutputBuffer`. The connection
/// keeps the handler alive until `connectionClosed` returns, then drops it.
public protocol ConnectionHandler: AnyObject {
    /// The connection is registered and readable (on a TLS port: its
    /// handshake is complete, `connection.tlsPeerSubject` is known). An over-limit connection
    /// (`connection.isOverConnectionLimit`) is closed right after this returns;
    /// write a refusal here if the protocol has one.
    func connectionActive(_ connection: Connection)

    /// New bytes arrived. `input` is *all* unconsumed input, oldest first, and
    /// is valid only during the call. Return how many leading bytes were
    /// consumed (0...input.count); the rest is offered again, with more bytes
    /// appended, next time.
    ///
    /// Back-pressure: a handler may stop consuming while output is pending
    /// (e.g. while `connection.isOutputBacklogged`, or once
    /// `connection.pendingOutputBytes` passes a budget of its own). Input left
    /// unconsumed while output is pending is offered again once the output
    /// drains to the low-water mark, even if no new bytes arrive.
    func connectionReadable(_ connection: Connection, _ input: UnsafeRawBufferPointer) -> Int

    /// The connection stopped reading: its pending output passed the
    /// high-water mark (STATS `readPauses` counts these). It reads again
    /// once the output drains to the low-water mark. Default: nothing.
    func connectionPausedReading(_ connection: Connection)

    /// The peer shut down its sending side (read returned end-of-file). No more
    /// input will come, but writing still works. Default: `connection.close()`,
    /// which sends what is pending, then closes. Override to finish work
    /// first (e.g. replies produced on other threads), then close.
    func connectionInputClosed(_ connection: Connection)

    /// The server is shutting down gracefully; the connection will be closed
    /// (after its pending output is sent) right after this returns, or, while
    /// the handler awaits an answer made off the loop
    /// (`Connection.beginAwaitingAnswer`), once that answer is written.
    /// Default: nothing.
    func connectionShuttingDown(_ connection: Connection)

    /// Called every `ConnectionLimits.tickInterval` (coarse, ~1 s) while the
    /// connection is open; use it for idle timeouts. Default: nothing.
    func connectionTick(_ connection: Connection, now: ContinuousClock.Instant)

    /// The TLS layer is closing the connection (`connectionClosed` follows):
    /// a failed or timed-out handshake, a plaintext peer on the TLS port,
    /// a record that does not decrypt. May come before `connectionActive`
    /// (which then never comes). Default: nothing.
    func connectionTLSFailed(_ connection: Connection, _ failure: TLSConnectionFailure)

    /// The connection is closed (by either side, or aborted). Called exactly
    /// once; the descriptor is already closed and writes are ignored.
    func connectionClosed(_ connection: Connection)
}

extension ConnectionHandler {
    public func connectionActive(_ connection: Connection) {}
    public func connectionInputClosed(_ connection: Connection) { connection.close() }
    public func connectionPausedReading(_ connection: Connection) {}
    public func connectionShuttingDown(_ connection: Connection) {}
    public func connectionTick(_ connection: Connection, now: ContinuousClock.Instant) {}
    public func connectionTLSFailed(_ connection: Connection, _ failure: TLSConnectionFailure) {}
    public func connectionClosed(_ connection: Connection) {}
}
