import Glibc

/// The error a failed `POSIXFile` call becomes: each module names its own,
/// `POSIXFile<SnapshotError>` for snapshot files, `POSIXFile<PersistenceError>`
/// for the log and the data directory.
package protocol POSIXFileFailure: Error {
    /// The `.io` error of a failed call: `message` names the call and `errno`.
    static func failedCall(_ message: String, file: String, errno: Int32) -> Self
    /// For humans; never parse it.
    var message: String { get }
    /// The file the problem is in, if any.
    var file: String? { get }
    /// Byte offset of the problem in `file`.
    var offset: UInt64? { get }
}

extension POSIXFileFailure {
    /// The errors' one text: `CODE: file at offset N: message`.
    package func described(as codeName: String) -> String {
        var s = "\(codeName): "
        if let file {
            s += file
            if let offset { s += " at offset \(offset)" }
            s += ": "
        }
        s += message
        return s
    }
}

/// Thin wrappers over the POSIX file calls of the snapshot and log modules. Every failure
/// becomes `Failure`'s `.io` error naming the call, the file and `errno`.
package enum POSIXFile<Failure: POSIXFileFailure> {
    package static func error(_ call: String, _ path: String, _ code: Int32 = errno) -> Failure {
        Failure.failedCall("\(call) failed: \(String(cString: strerror(code))) (errno \(code))", file: path, errno: code)
    }

    /// Opens `path`, retrying on EINTR. `O_CLOEXEC` is always added.
    package static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws(Failure) -> Int32 {
        while true {
            let fd = path.withCString { Glibc.open($0, flags | O_CLOEXEC, mode) }
            if fd >= 0 { return fd }
            if errno != EINTR { throw error("open", path) }
        }
    }

    /// Writes all of `bytes`, retrying short writes and EINTR.
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n > 0 { offset += n; continue }
            if n < 0 && errno == EINTR { continue }
            throw error("write", path, n == 0 ? EIO : errno)
        }
    }

    /// Writes all of `bytes[range]`.
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8], _ range: Range<Int>? = nil, path: String) throws(Failure) {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(Failure) in
                try writeAll(fd, UnsafeRawBufferPointer(rebasing: raw[range ?? 0..<raw.count]), path: path)
            }
        }
        try result.get()
    }

    /// Writes `count` zero bytes at `offset`, leaving the file offset where
    /// it is (`pwrite`), retrying short writes and EINTR.
    package static func writeZeros(_ fd: Int32, at offset: Int, count: Int, path: String) throws(Failure) {
        let zeros = UnsafeMutableRawBufferPointer.allocate(byteCount: min(count, 64 << 10), alignment: 16)
        defer { zeros.deallocate() }
        zeros.initializeMemory(as: UInt8.self, repeating: 0)
        var done = 0
        while done < count {
            let n = pwrite(fd, zeros.baseAddress, min(zeros.count, count - done), off_t(offset + done))
            if n > 0 { done += n; continue }
            if n < 0 && errno == EINTR { continue }
            throw error("pwrite", path, n == 0 ? EIO : errno)
        }
    }

    /// Reads up to `buffer.count` bytes; 0 at end of file.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, path: String) throws(Failure) -> Int {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno != EINTR { throw error("read", path) }
        }
    }

    package static func fsync(_ fd: Int32, path: String) throws(Failure) {
        if Glibc.fsync(fd) != 0 { throw error("fsync", path) }
    }

    /// Makes the directory's entries (created, renamed, removed files) durable.
    package static func fsyncDirectory(_ path: String) throws(Failure) {
        let fd = try open(path, O_RDONLY | O_DIRECTORY)
        defer { Glibc.close(fd) }
        try fsync(fd, path: path)
    }

    /// Sets the size of the file at `path` to `length` and fsyncs it.
    package static func truncate(_ path: String, to length: UInt64) throws(Failure) {
        let fd = try open(path, O_WRONLY)
        defer { Glibc.close(fd) }
        try truncate(fd, to: Int(length), path: path)
        try fsync(fd, path: path)
    }

    /// Sets the size of the open file `fd` (at `path`) to `length`; no fsync.
    package static func truncate(_ fd: Int32, to length: Int, path: String) throws(Failure) {
        if ftruncate(fd, off_t(length)) != 0 { throw error("ftruncate", path) }
    }

    package static func unlink(_ path: String) throws(Failure) {
        if path.withCString({ Glibc.unlink($0) }) != 0 && errno != ENOENT { throw error("unlink", path) }
    }

    package static func rename(_ from: String, _ to: String) throws(Failure) {
        let rc = from.withCString { f in to.withCString { t in Glibc.rename(f, t) } }
        if rc != 0 { throw error("rename to \(to)", from) }
    }

    /// Creates `path` (and missing parents) as directories.
    package static func makeDirectories(_ path: String) throws(Failure) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += part
            if prefix.withCString({ mkdir($0, 0o755) }) != 0 && errno != EEXIST {
                throw error("mkdir", prefix)
            }
            prefix += "/"
        }
    }

    /// The names in a directory, without `.` and `..`.
    package static func listDirectory(_ path: String) throws(Failure) -> [String] {
        guard let dir = path.withCString({ opendir($0) }) else { throw error("opendir", path) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    package static func fileSize(_ fd: Int32, path: String) throws(Failure) -> UInt64 {
        var st = stat()
        if fstat(fd, &st) != 0 { throw error("fstat", path) }
        return UInt64(st.st_size)
    }

    package static func exists(_ path: String) -> Bool {
        path.withCString { access($0, F_OK) } == 0
    }
}

/// A file mapped read-only for scanning. Unmapped by `close()` or deinit.
package final class MappedFile {
    package let path: String
    private let base: UnsafeMutableRawPointer?
    package let count: Int

    /// Maps `path`; a failed call throws `Failure`'s `.io` error.
    package init<Failure: POSIXFileFailure>(path: String, failure: Failure.Type) throws(Failure) {
        self.path = path
        let fd = try POSIXFile<Failure>.open(path, O_RDONLY)
        defer { Glibc.close(fd) }
        let size = try POSIXFile<Failure>.fileSize(fd, path: path)
        count = Int(size)
        if count == 0 {
            base = nil
            return
        }
        let p = mmap(nil, count, PROT_READ, MAP_PRIVATE, fd, 0)
        guard let p, p != MAP_FAILED else { throw POSIXFile<Failure>.error("mmap", path) }
        madvise(p, count, MADV_SEQUENTIAL)
        base = p
    }

    /// Calls `body` with the file's bytes; they must not escape it.
    package func withBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    deinit {
        if let base { munmap(base, count) }
    }
}
