/// An error of the snapshot file format (Protocol/SNAPSHOT.md): reading or
/// writing a snapshot, its gzip stream and the files it lives in. It names
/// the file (or stream) and, where it applies, the byte offset the problem
/// was found at, so an operator can act on the message alone.
///
/// The write-ahead log and the data directory have their own error,
/// `PersistenceError` (ChecklistPersistence), which wraps this one when a
/// snapshot of the directory fails.
public struct SnapshotError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong. A struct with static constants rather than an enum, so
    /// that codes added later never break users. The raw values are those of
    /// Protocol/SNAPSHOT.md section 4.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        /// A system call or zlib failed (`errno`, where set, says why).
        public static let io = Code(rawValue: 1)
        /// A snapshot's bytes are not a valid snapshot: bad magic, unknown
        /// record, a record out of order, a corrupt gzip stream.
        public static let corruptSnapshot = Code(rawValue: 7)
        /// A snapshot ends before its trailer.
        public static let truncatedSnapshot = Code(rawValue: 8)
        /// A snapshot's trailer CRC32 or counts do not match its content.
        public static let snapshotChecksum = Code(rawValue: 9)
        /// A snapshot inflates past the reader's size or ratio limit.
        public static let decompressionLimit = Code(rawValue: 10)
        /// A snapshot of a format version this reader does not know.
        public static let unsupportedVersion = Code(rawValue: 11)
        /// A record is larger than the reader accepts.
        public static let recordTooLarge = Code(rawValue: 12)
        /// The writer or decoder was used against its rules (e.g. fewer
        /// items than the list announced). A bug in the caller.
        public static let misuse = Code(rawValue: 13)

        public var name: String {
            switch self {
            case .io: return "IO"
            case .corruptSnapshot: return "CORRUPT_SNAPSHOT"
            case .truncatedSnapshot: return "TRUNCATED_SNAPSHOT"
            case .snapshotChecksum: return "SNAPSHOT_CHECKSUM"
            case .decompressionLimit: return "DECOMPRESSION_LIMIT"
            case .unsupportedVersion: return "UNSUPPORTED_VERSION"
            case .recordTooLarge: return "RECORD_TOO_LARGE"
            case .misuse: return "MISUSE"
            default: return "SNAPSHOT_\(rawValue)"
            }
        }

        public var description: String { name }
    }

    /// What went wrong.
    public var code: Code
    /// For humans; never parse it.
    public var message: String
    /// The file (or stream name) the problem is in, if any.
    public var file: String?
    /// Byte offset of the problem in `file`: the offset in the uncompressed
    /// record stream; `message` adds the compressed offset.
    public var offset: UInt64?
    /// The `errno` of a failed system call (`.io`).
    public var errno: Int32?

    /// An error with `code`, a human `message` and, where known, the file,
    /// the offset in it and the `errno` of a failed system call.
    public init(_ code: Code, _ message: String, file: String? = nil, offset: UInt64? = nil, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.file = file
        self.offset = offset
        self.errno = errno
    }

    public var description: String { described(as: code.name) }
}

extension SnapshotError: POSIXFileFailure {
    package static func failedCall(_ message: String, file: String, errno: Int32) -> SnapshotError {
        SnapshotError(.io, message, file: file, errno: errno)
    }
}
