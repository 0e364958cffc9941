import Synchronization

/// A flag set once and read from any thread: a connection that closed
/// tells the transfer workers to skip its jobs not started yet (their
/// answers could not be delivered), so that what they hold, an import's
/// place among them, is freed at once.
final class CancellationFlag: Sendable {
    private let value = Atomic<Bool>(false)

    var isSet: Bool { value.load(ordering: .relaxed) }

    func set() { value.store(true, ordering: .relaxed) }
}
