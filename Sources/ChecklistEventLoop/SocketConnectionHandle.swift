/// A `Sendable` reference to a `SocketConnection`, for code on other threads (e.g.
/// pushing a change notification to a subscriber on another loop).
///
/// Equal handles name the same connection. Holding a handle keeps the small
/// `SocketConnection` object alive but not its socket or buffers, which are
/// released when it closes.
public struct SocketConnectionHandle: Sendable, Hashable, CustomStringConvertible {
    private let bound: LoopBound<SocketConnection>
    public let id: UInt64

    package init(connection: SocketConnection) {
        self.bound = LoopBound(connection, eventLoop: connection.eventLoop)
        self.id = connection.id
    }

    /// The loop that owns the connection.
    public var eventLoop: EventLoop { bound.eventLoop }

    /// Runs `body` with the connection on its loop (soon, after the current
    /// batch), unless it has closed by then. Safe from any thread.
    ///
    /// - Returns: false if the loop has stopped and `body` will not run.
    @discardableResult
    public func execute(_ body: @escaping @Sendable (SocketConnection) -> Void) -> Bool {
        let bound = self.bound
        return bound.eventLoop.execute {
            let connection = bound.value
            guard !connection.isClosed else { return }
            body(connection)
        }
    }

    /// The connection itself; only on its loop's thread (checked).
    public var connection: SocketConnection { bound.value }

    public static func == (a: SocketConnectionHandle, b: SocketConnectionHandle) -> Bool {
        a.id == b.id && a.bound.eventLoop === b.bound.eventLoop
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    public var description: String { "SocketConnectionHandle(\(id))" }
}
