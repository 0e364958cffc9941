/// Resource bounds a `TCPServer` enforces per connection and overall.
public struct ConnectionLimits: Sendable, Hashable {
    /// Connections served at once. Beyond it a connection is still accepted,
    /// marked `isOverConnectionLimit`, shown to its handler (which may write a
    /// refusal) and then closed.
    public var maxConnections: Int
    /// Default unconsumed-input bound of a new connection (a handler usually
    /// sets `SocketConnection.maxInputBytes` from its maximum frame size). A
    /// connection holding more unconsumed input is closed.
    public var maxInputBytes: Int
    /// Pending output above which the connection stops reading (and
    /// `SocketConnection.isOutputBacklogged` turns true) ...
    public var outputHighWaterMark: Int
    /// ... until it drains to this many bytes.
    public var outputLowWaterMark: Int
    /// Pending output beyond which the peer is taken to have stopped reading
    /// and the connection is aborted. Checked after each flush attempt, so a
    /// single response may be larger than the high-water mark, but must fit.
    public var maxOutputBytes: Int
    /// How long `SocketConnection.close()` waits for pending output to drain.
    public var closeTimeout: Duration
    /// After our output is flushed and our side shut down, how long a
    /// closing connection keeps reading (and discarding) until the peer
    /// closes too. Closing with unread input would reset the connection and
    /// could destroy replies the peer has not read yet.
    public var lingerTimeout: Duration
    /// Period of the per-loop tick (`SocketConnectionHandler.connectionTick`,
    /// close deadlines, idle-buffer release).
    public var tickInterval: Duration
    /// `listen(2)` backlog.
    public var listenBacklog: Int32

    public init(
        maxConnections: Int = 10_000,
        maxInputBytes: Int = 4 << 20,
        outputHighWaterMark: Int = 256 << 10,
        outputLowWaterMark: Int = 64 << 10,
        maxOutputBytes: Int = 16 << 20,
        closeTimeout: Duration = .seconds(10),
        lingerTimeout: Duration = .seconds(2),
        tickInterval: Duration = .seconds(1),
        listenBacklog: Int32 = 4096
    ) {
        precondition(outputLowWaterMark <= outputHighWaterMark && outputHighWaterMark <= maxOutputBytes,
                     "need outputLowWaterMark <= outputHighWaterMark <= maxOutputBytes")
        self.maxConnections = maxConnections
        self.maxInputBytes = maxInputBytes
        self.outputHighWaterMark = outputHighWaterMark
        self.outputLowWaterMark = outputLowWaterMark
        self.maxOutputBytes = maxOutputBytes
        self.closeTimeout = closeTimeout
        self.lingerTimeout = lingerTimeout
        self.tickInterval = tickInterval
        self.listenBacklog = listenBacklog
    }
}
