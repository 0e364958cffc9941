import ChecklistSnapshot

/// An error of the write-ahead log and the data directory: log records and
/// segments, the directory's lock, fsync failures, recovery. It names the
/// file and, where it applies, the byte offset the problem was found at, so
/// an operator can act on the message alone.
///
/// A snapshot of the directory that cannot be read or written is
/// `.snapshot`, with the snapshot format's own error in `snapshot`; the
/// description is then that error's (`CORRUPT_SNAPSHOT: ...`).
public struct PersistenceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong. A struct with static constants rather than an enum, so
    /// that codes added later never break users.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        /// A system call failed (`errno` says why).
        public static let io = Code(rawValue: 1)
        /// Another process holds the data directory's `LOCK`.
        public static let locked = Code(rawValue: 2)
        /// A log record in the middle of the log failed its CRC or could not
        /// be decoded. Recovery stops: nothing is loaded silently.
        public static let corruptLog = Code(rawValue: 3)
        /// The log misses records it must have (a segment is missing, or the
        /// log starts after the snapshot it continues).
        public static let logGap = Code(rawValue: 4)
        /// The log failed earlier (a write or fsync error); it takes no more
        /// records. Restart the server after fixing the disk.
        public static let logFailed = Code(rawValue: 5)
        /// The log was closed.
        public static let logClosed = Code(rawValue: 6)
        /// A log segment of a format version this build does not know.
        public static let unsupportedVersion = Code(rawValue: 11)
        /// The log was used against its rules (e.g. opened before recovery).
        /// A bug in the caller.
        public static let misuse = Code(rawValue: 13)
        /// A change replayed from the log does not fit the restored state
        /// (see `ReplayRule`).
        public static let replayMismatch = Code(rawValue: 14)
        /// A snapshot of the data directory could not be read or written
        /// (damaged, truncated, an I/O error while writing it); `snapshot`
        /// says how.
        public static let snapshot = Code(rawValue: 15)

        public var name: String {
            switch self {
            case .io: return "IO"
            case .locked: return "LOCKED"
            case .corruptLog: return "CORRUPT_LOG"
            case .logGap: return "LOG_GAP"
            case .logFailed: return "LOG_FAILED"
            case .logClosed: return "LOG_CLOSED"
            case .unsupportedVersion: return "UNSUPPORTED_VERSION"
            case .misuse: return "MISUSE"
            case .replayMismatch: return "REPLAY_MISMATCH"
            case .snapshot: return "SNAPSHOT"
            default: return "PERSISTENCE_\(rawValue)"
            }
        }

        public var description: String { name }
    }

    /// What went wrong.
    public var code: Code
    /// For humans; never parse it.
    public var message: String
    /// The file the problem is in, if any.
    public var file: String?
    /// Byte offset of the problem in `file`. For snapshots this is the offset
    /// in the uncompressed record stream; `message` adds the compressed offset.
    public var offset: UInt64?
    /// The `errno` of a failed system call (`.io`).
    public var errno: Int32?
    /// The snapshot format's error behind a `.snapshot` error.
    public var snapshot: SnapshotError?

    /// An error with `code`, a human `message` and, where known, the file,
    /// the offset in it and the `errno` of a failed system call.
    public init(_ code: Code, _ message: String, file: String? = nil, offset: UInt64? = nil, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.file = file
        self.offset = offset
        self.errno = errno
    }

    /// A snapshot of the data directory failed: `.snapshot`, with the
    /// snapshot error's message, file, offset and `errno`.
    public init(snapshot: SnapshotError) {
        self.init(.snapshot, snapshot.message, file: snapshot.file, offset: snapshot.offset, errno: snapshot.errno)
        self.snapshot = snapshot
    }

    /// `CODE: file at offset N: message`; for a `.snapshot` error the code
    /// is the snapshot error's (`TRUNCATED_SNAPSHOT: ...`).
    public var description: String { described(as: snapshot?.code.name ?? code.name) }

    /// Runs `body`, a step of a data-directory operation that reads or
    /// writes a snapshot, and turns the `SnapshotError` it throws into a
    /// `.snapshot` error. Other errors pass through unchanged.
    static func wrappingSnapshotErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SnapshotError {
            throw PersistenceError(snapshot: error)
        }
    }
}

extension PersistenceError: POSIXFileFailure {
    package static func failedCall(_ message: String, file: String, errno: Int32) -> PersistenceError {
        PersistenceError(.io, message, file: file, errno: errno)
    }
}

/// The POSIX file calls of the log and the data directory: a failed call is
/// a `PersistenceError(.io)` naming the call, the file and `errno`.
typealias DirectoryFiles = POSIXFile<PersistenceError>
