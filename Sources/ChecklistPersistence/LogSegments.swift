import ChecklistSnapshot
import ChecklistWire
import Glibc

/// The segment files of a write-ahead log directory (Protocol/SNAPSHOT.md
/// section 6.1).
public enum LogSegments {
    /// The first LSNs of the segment files in `directory`, ascending.
    public static func list(in directory: String) throws(PersistenceError) -> [LSN] {
        try DirectoryFiles.listDirectory(directory).compactMap(LogRecordFormat.firstLSN(ofSegmentName:)).sorted()
    }

    /// The path of the segment starting at `firstLSN`.
    public static func path(in directory: String, firstLSN: LSN) -> String {
        directory + "/" + LogRecordFormat.segmentName(firstLSN: firstLSN)
    }

    /// Deletes every segment file but the last whose records all have an LSN
    /// below `lsn` (the next segment starts at or before `lsn`), then fsyncs
    /// the directory. Returns the first LSNs of the removed segments.
    static func remove(in directory: String, from segments: [LSN], before lsn: LSN) throws(PersistenceError) -> [LSN] {
        var count = 0
        while count + 1 < segments.count && segments[count + 1] <= lsn { count += 1 }
        let doomed = Array(segments[..<count])
        guard !doomed.isEmpty else { return [] }
        for first in doomed { try DirectoryFiles.unlink(path(in: directory, firstLSN: first)) }
        try DirectoryFiles.fsyncDirectory(directory)
        return doomed
    }

    /// Makes the segment `fd` (at `path`) durable with `syncFile`
    /// (`WriteAheadLog.Options.syncFile`, fdatasync(2) by default).
    static func sync(_ fd: Int32, path: String, with syncFile: @Sendable (Int32) -> Int32) throws(PersistenceError) {
        let rc = syncFile(fd)
        if rc != 0 { throw DirectoryFiles.error("fdatasync", path, rc) }
    }

    /// Creates the segment starting at `firstLSN`, writes its header, makes
    /// file and directory entry durable, and returns the file descriptor
    /// (write-only, its offset past the header: records follow with
    /// `write`, while zeros may be laid ahead of them with `pwrite`). An
    /// existing file of that name is reused only if it holds no record (a
    /// crash right after creating it).
    static func create(in directory: String, firstLSN: LSN,
                       syncFile: @Sendable (Int32) -> Int32) throws(PersistenceError) -> Int32 {
        let path = path(in: directory, firstLSN: firstLSN)
        let fd = try DirectoryFiles.open(path, O_WRONLY | O_CREAT)
        do throws(PersistenceError) {
            let size = try DirectoryFiles.fileSize(fd, path: path)
            guard size <= UInt64(LogRecordFormat.segmentHeaderBytes) else {
                throw PersistenceError(.misuse, "segment already holds records: run Recovery before opening the log", file: path)
            }
            if ftruncate(fd, 0) != 0 { throw DirectoryFiles.error("ftruncate", path) }
            var w = WireWriter(capacity: LogRecordFormat.segmentHeaderBytes)
            LogRecordFormat.writeSegmentHeader(firstLSN: firstLSN, into: &w)
            try DirectoryFiles.writeAll(fd, w.bytes, path: path)
            try sync(fd, path: path, with: syncFile)
            try DirectoryFiles.fsyncDirectory(directory)
            return fd
        } catch {
            Glibc.close(fd)
            throw error
        }
    }
}
