/// Protocol logic for one connection. A `TCPServer` makes one handler per
/// connection (with its `handlerFactory`) and calls it only on that
/// connection's event loop thread, never re-entrantly for the same connection
/// (a close requested inside a callback is reported after it returns).
///
/// Handlers hold no socket: they read from the buffer they are given and
/// answer through `connection.write` / `withOutputBuffer`. The connection
/// keeps the handler alive until `connectionClosed` returns, then drops it.
public protocol SocketConnectionHandler: AnyObject {
    /// The connection is registered and readable (on a TLS port: its
    /// handshake is complete, `connection.tlsPeerSubject` is known). An over-limit connection
    /// (`connection.isOverConnectionLimit`) is closed right after this returns;
    /// write a refusal here if the protocol has one.
    func connectionActive(_ connection: SocketConnection)

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
    func connectionReadable(_ connection: SocketConnection, _ input: UnsafeRawBufferPointer) -> Int

    /// The connection stopped reading: its pending output passed the
    /// high-water mark (STATS `readPauses` counts these). It reads again
    /// once the output drains to the low-water mark. Default: nothing.
    func connectionPausedReading(_ connection: SocketConnection)

    /// The peer shut down its sending side (read returned end-of-file). No more
    /// input will come, but writing still works. Default: `connection.close()`,
    /// which sends what is pending, then closes. Override to finish work
    /// first (e.g. replies produced on other threads), then close.
    func connectionInputClosed(_ connection: SocketConnection)

    /// The server is shutting down gracefully; the connection will be closed
    /// (after its pending output is sent) right after this returns, or, while
    /// the handler awaits an answer made off the loop
    /// (`SocketConnection.beginAwaitingAnswer`), once that answer is written.
    /// Default: nothing.
    func connectionShuttingDown(_ connection: SocketConnection)

    /// Called every `ConnectionLimits.tickInterval` (coarse, ~1 s) while the
    /// connection is open; use it for idle timeouts. Default: nothing.
    func connectionTick(_ connection: SocketConnection, now: ContinuousClock.Instant)

    /// The TLS layer is closing the connection (`connectionClosed` follows):
    /// a failed or timed-out handshake, a plaintext peer on the TLS port,
    /// a record that does not decrypt. May come before `connectionActive`
    /// (which then never comes). Default: nothing.
    func connectionTLSFailed(_ connection: SocketConnection, _ failure: TLSConnectionFailure)

    /// The connection is closed (by either side, or aborted). Called exactly
    /// once; the descriptor is already closed and writes are ignored.
    func connectionClosed(_ connection: SocketConnection)
}

extension SocketConnectionHandler {
    public func connectionActive(_ connection: SocketConnection) {}
    public func connectionInputClosed(_ connection: SocketConnection) { connection.close() }
    public func connectionPausedReading(_ connection: SocketConnection) {}
    public func connectionShuttingDown(_ connection: SocketConnection) {}
    public func connectionTick(_ connection: SocketConnection, now: ContinuousClock.Instant) {}
    public func connectionTLSFailed(_ connection: SocketConnection, _ failure: TLSConnectionFailure) {}
    public func connectionClosed(_ connection: SocketConnection) {}
}
