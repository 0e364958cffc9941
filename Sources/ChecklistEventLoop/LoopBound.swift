/// A value that belongs to one event loop, carried through other threads in a
/// `Sendable` wrapper but only ever opened on its loop.
///
/// Use it to hand a loop-confined object (a `SocketConnection`, a per-loop table) to
/// code on another thread that will send work back with
/// `eventLoop.execute { bound.value ... }`.
///
/// Safety: `@unchecked Sendable` because the wrapped value is read only
/// through `value`, which traps (in every build) unless called on
/// `eventLoop`'s thread, and the initializer runs on that thread too. So the
/// value is touched by one thread only, as if it had never left it.
public struct LoopBound<Value>: @unchecked Sendable {
    public let eventLoop: EventLoop
    private let _value: Value

    /// Wraps `value`; must be called on `eventLoop`.
    public init(_ value: Value, eventLoop: EventLoop) {
        eventLoop.preconditionInEventLoop()
        self.eventLoop = eventLoop
        self._value = value
    }

    /// For state built on another thread *before* `eventLoop` can reach it
    /// (e.g. a server's per-loop tables made in its initializer): the caller
    /// promises that, from now on, only `eventLoop` touches the value. The
    /// hand-over happens through `execute`, whose queue lock orders the
    /// builder's writes before the loop's reads.
    package init(handingOver value: Value, to eventLoop: EventLoop) {
        self.eventLoop = eventLoop
        self._value = value
    }

    /// The value; traps unless called on `eventLoop`.
    public var value: Value {
        eventLoop.preconditionInEventLoop()
        return _value
    }
}
