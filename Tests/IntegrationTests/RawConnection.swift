import ChecklistTesting

/// The blocking, byte-level connection of the integration tests (shared
/// with the in-process tests): exact bytes out, whole frames in, every read
/// bounded by a receive timeout.
typealias RawConnection = FrameSocket

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
