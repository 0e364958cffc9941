import ChecklistIO

/// Readiness bits as plain `UInt32` masks: what a `Selectable` is
/// registered for and what `handleEvents` receives. The values are those of
/// ChecklistIO's `ReadinessEvents` (and `ReadinessInterest`), whichever
/// readiness implementation the loop runs on; the name is from when the
/// loops ran on epoll alone.
///
/// Loops are level-triggered throughout: a connection is read once per
/// wake-up and reported again if bytes remain, which gives every ready
/// socket on a loop a turn per iteration (fairness) without per-connection
/// "still readable" bookkeeping. The price is a re-registration when output
/// interest or back-pressure changes, which is rare.
enum EpollMask {
    static let input = ReadinessEvents.readable.rawValue
    static let output = ReadinessEvents.writable.rawValue
    static let error = ReadinessEvents.error.rawValue
    static let hangUp = ReadinessEvents.hangUp.rawValue
}
