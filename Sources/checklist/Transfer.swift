import ChecklistClient
import ChecklistSnapshot
import ChecklistTransfer
#if canImport(Glibc)
import Glibc
#endif

/// `checklist export` and `checklist import`: files in and out through
/// EXPORT and IMPORT, converted by `ChecklistTransfer` where the format is
/// not a snapshot.
struct Transfer {
    let connection: ChecklistConnection
    let json: Bool

    /// The most a property-list file may hold (it is read whole: the format
    /// has its offset table at the end; JSON and snapshots stream).
    static let maxDocumentBytes = 1 << 30

    func export(to path: String, lists: [ListID], format: TransferFormat) async throws -> String {
        let sink = try FileSink(path: path)
        let progress = TransferProgress(verb: "exported", stdoutTaken: json || path == "-")
        let report: (SnapshotTransferProgress) -> Void = { p in
            progress.update(p, fraction: p.totalItems.map { $0 == 0 ? 1 : Double(p.items) / Double($0) })
        }
        let summary: ExportSummary
        do {
            switch format {
            case .snapshot:
                summary = try await connection.exportSnapshot(lists: lists, progress: report) { try sink.write($0) }
            case .json:
                let converter = try SnapshotToJSON(name: "EXPORT stream") { try sink.write($0) }
                summary = try await connection.exportSnapshot(lists: lists, progress: report) { try converter.feed($0) }
                try converter.finish()
            case .plist, .keyedArchive:
                let collected = ByteSource(bytes: [])
                summary = try await connection.exportSnapshot(lists: lists, progress: report) { collected.bytes += $0 }
                let document = try ChecklistDocument(snapshot: try SnapshotReader(name: "EXPORT stream", input: collected.fill))
                try sink.write(format == .plist ? try document.propertyList() : try document.keyedArchive())
            }
            try sink.commit()
        } catch {
            progress.finish()
            sink.abandon()
            throw Self.describe(error)
        }
        progress.finish()
        if json {
            return JSON.object([
                ("file", .string(path)), ("format", .string(format.rawValue)), ("lists", .uint(summary.lists)),
                ("items", .uint(summary.items)), ("rawBytes", .uint(summary.rawBytes)),
                ("compressedBytes", .uint(summary.compressedBytes)), ("bytesWritten", .uint(sink.written)),
                ("seconds", .number(Self.seconds(progress.elapsedSeconds))),
            ]).rendered()
        }
        return "Exported \(Self.plural(summary.lists, "list")), \(Self.plural(summary.items, "item")) to \(path) (\(format.rawValue), "
            + "\(TransferProgress.bytes(sink.written)); snapshot \(TransferProgress.bytes(summary.rawBytes)) raw, "
            + "\(TransferProgress.bytes(summary.compressedBytes)) compressed) in \(Self.seconds(progress.elapsedSeconds)) s."
    }

    /// - Parameter name: the name of the list made from a file of items only.
    func importFile(from path: String, replace: Bool, name: String?) async throws -> String {
        let file = try FileSource(path: path)
        let prefix = try file.peek(512)
        guard let format = TransferFormat.detect(prefix) else {
            throw LookupError(message: "BAD_FILE: \(path) is neither a snapshot (gzip), Checklists JSON nor a property list")
        }
        let nameForItems = name ?? Self.listName(forFile: path)
        let createdAt = Int64(time(nil))
        let source: ((Int) throws -> [UInt8]?)?
        switch format {
        case .snapshot:
            source = nil
        case .json:
            let seekable = try file.seekable()
            do {
                let stream = try JSONSnapshotStream(readAt: seekable.read(at:into:), nameForItems: nameForItems,
                                                    source: "checklist import (json)", createdAt: createdAt)
                source = stream.read
            } catch {
                throw LookupError(message: "BAD_FILE: \(path): \(error)")
            }
        case .plist, .keyedArchive:
            let bytes = try file.readAll(limit: Self.maxDocumentBytes)
            let document: ChecklistDocument
            do {
                document = try ChecklistDocument(propertyList: bytes, nameForItems: nameForItems)
            } catch {
                throw LookupError(message: "BAD_FILE: \(path): \(error)")
            }
            source = ByteSource(bytes: try document.snapshotFile(source: "checklist import (plist)", createdAt: createdAt)).read
        }
        let total = source == nil ? file.size : nil
        let progress = TransferProgress(verb: "imported", stdoutTaken: json)
        var sent: UInt64 = 0
        let ok: ImportOK
        do {
            ok = try await connection.importSnapshot(mode: replace ? .replace : .merge, progress: { p in
                progress.update(p, fraction: total.map { $0 == 0 ? 1 : Double(p.bytes) / Double($0) })
            }, read: { count in
                let chunk = try source.map { try $0(count) } ?? file.read(count)
                sent += UInt64(chunk?.count ?? 0)
                return chunk
            })
        } catch {
            progress.finish()
            throw Self.describe(error)
        }
        progress.finish()
        let mode = replace ? "replace" : "merge"
        if json {
            let renamed: [JSON] = ok.renamed.map { .object([("from", .uint($0.from.rawValue)), ("to", .uint($0.to.rawValue))]) }
            return JSON.object([
                ("file", .string(path)), ("format", .string(format.rawValue)), ("mode", .string(mode)),
                ("lists", .uint(ok.lists)), ("items", .uint(ok.items)), ("deleted", .uint(ok.deleted)),
                ("renamed", .array(renamed)), ("rawBytes", .uint(ok.rawBytes)), ("compressedBytes", .uint(sent)),
                ("seconds", .number(Self.seconds(progress.elapsedSeconds))),
            ]).rendered()
        }
        var text = "Imported \(Self.plural(ok.lists, "list")), \(Self.plural(ok.items, "item")) from \(path) (\(format.rawValue), \(mode)"
        if replace { text += "; \(ok.deleted) other lists deleted" }
        text += ") in \(Self.seconds(progress.elapsedSeconds)) s."
        // Lists of files without ids (plist, JSON without "id") have ids the server never keeps.
        for pair in ok.renamed where pair.from.rawValue < ChecklistDocument.firstUnkeptListID {
            text += "\nList \(pair.from) of the file is list \(pair.to) now (its id was taken)."
        }
        return text
    }

    /// The name of a list made from a file of items only: the file's name
    /// without its directory and extension (`seed.plist` is `seed`).
    static func listName(forFile path: String) -> String {
        guard path != "-" else { return "Checklist" }
        let base = path.split(separator: "/").last.map(String.init) ?? path
        let stem = base.lastIndex(of: ".").map { String(base[..<$0]) } ?? base
        return stem.isEmpty ? base : stem
    }

    /// Snapshot and file errors as the CLI reports them (status 1).
    private static func describe(_ error: any Error) -> any Error {
        switch error {
        case let e as SnapshotError: return LookupError(message: "\(e.code.name): \(e.message)")
        case let e as TransferError: return LookupError(message: "BAD_FILE: \(e.message)")
        default: return error
        }
    }

    /// `1 list`, `2 lists`.
    static func plural(_ n: UInt64, _ noun: String) -> String {
        "\(n) \(noun)\(n == 1 ? "" : "s")"
    }

    /// `1.25`: seconds with two decimals.
    static func seconds(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let fraction = String(hundredths % 100)
        return "\(hundredths / 100)." + String(repeating: "0", count: 2 - fraction.count) + fraction
    }
}

/// Bytes in memory read a piece at a time.
final class ByteSource {
    var bytes: [UInt8]
    private var offset = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    func read(_ count: Int) -> [UInt8]? {
        guard offset < bytes.count else { return nil }
        let end = min(bytes.count, offset + count)
        defer { offset = end }
        return Array(bytes[offset..<end])
    }

    /// `SnapshotReader`'s input: fills `buffer`, 0 at the end.
    func fill(_ buffer: UnsafeMutableRawBufferPointer) -> Int {
        let n = min(buffer.count, bytes.count - offset)
        if n > 0 {
            bytes.withUnsafeBytes { raw in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + n)]))
            }
        }
        offset += n
        return n
    }
}

/// A file written under a temporary name and renamed into place once
/// complete, so that a failed export never leaves a file that looks whole.
/// `-` is standard output.
final class FileSink {
    let path: String
    private let temporary: String?
    private var fd: Int32
    private(set) var written: UInt64 = 0

    init(path: String) throws {
        self.path = path
        if path == "-" {
            temporary = nil
            fd = 1
            return
        }
        let temporary = path + ".partial"
        self.temporary = temporary
        fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw LookupError(message: "BAD_FILE: cannot create \(temporary): \(String(cString: strerror(errno)))") }
    }

    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw LookupError(message: "BAD_FILE: cannot write \(path): \(String(cString: strerror(errno)))")
                }
                offset += n
            }
        }
        written += UInt64(bytes.count)
    }

    /// Flushes the file to disk and gives it its name.
    func commit() throws {
        guard let temporary else { return }
        guard fsync(fd) == 0, close(fd) == 0 else {
            throw LookupError(message: "BAD_FILE: cannot write \(path): \(String(cString: strerror(errno)))")
        }
        fd = -1
        guard rename(temporary, path) == 0 else {
            throw LookupError(message: "BAD_FILE: cannot rename \(temporary) to \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Removes the partial file.
    func abandon() {
        guard let temporary else { return }
        if fd >= 0 { close(fd) }
        fd = -1
        unlink(temporary)
    }

    deinit {
        if fd > 2 { close(fd) }
    }
}

/// A file read in pieces; `-` is standard input.
final class FileSource {
    let path: String
    private let fd: Int32
    private var pending: [UInt8] = []
    /// The file's size, when it is a regular file.
    let size: UInt64?

    init(path: String) throws {
        self.path = path
        if path == "-" {
            fd = 0
            size = nil
            return
        }
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw LookupError(message: "BAD_FILE: cannot open \(path): \(String(cString: strerror(errno)))") }
        var info = stat()
        size = fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG ? UInt64(info.st_size) : nil
    }

    deinit {
        if fd > 2 { close(fd) }
    }

    /// The first `count` bytes (fewer if the file is shorter), kept for `read`.
    func peek(_ count: Int) throws -> [UInt8] {
        while pending.count < count {
            guard let more = try readRaw(count - pending.count) else { break }
            pending += more
        }
        return pending
    }

    /// Up to `count` bytes, or nil at the end.
    func read(_ count: Int) throws -> [UInt8]? {
        if !pending.isEmpty {
            let taken = Array(pending.prefix(count))
            pending.removeFirst(taken.count)
            return taken
        }
        return try readRaw(count)
    }

    /// `count` bytes at `offset` (`pread`), for reading a regular file
    /// twice; 0 at the end.
    func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let n = pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
            if n < 0 {
                if errno == EINTR { continue }
                throw LookupError(message: "BAD_FILE: cannot read \(path): \(String(cString: strerror(errno)))")
            }
            return n
        }
    }

    /// This file if it is a regular one; otherwise (standard input, a pipe)
    /// its content copied to an unlinked temporary file, so it can be read twice.
    func seekable() throws -> FileSource {
        if size != nil { return self }
        let template = (getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp") + "/checklist-import-XXXXXX"
        var name = Array(template.utf8CString)
        let tmp = name.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard tmp >= 0 else { throw LookupError(message: "BAD_FILE: cannot create a temporary file for \(path): \(String(cString: strerror(errno)))") }
        unlink(String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        let copy = FileSource(path: path, fd: tmp)
        while let chunk = try read(1 << 20) {
            try chunk.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = Glibc.write(tmp, raw.baseAddress! + offset, raw.count - offset)
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { throw LookupError(message: "BAD_FILE: cannot copy \(path): \(String(cString: strerror(errno)))") }
                    offset += n
                }
            }
        }
        return copy
    }

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
        size = nil
    }

    /// The whole (rest of the) file, at most `limit` bytes.
    func readAll(limit: Int) throws -> [UInt8] {
        var all: [UInt8] = []
        while let more = try read(1 << 20) {
            all += more
            if all.count > limit { throw LookupError(message: "BAD_FILE: \(path) is larger than \(limit) bytes; use a snapshot for large stores") }
        }
        return all
    }

    private func readRaw(_ count: Int) throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: count)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw LookupError(message: "BAD_FILE: cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { return nil }
            buffer.removeLast(count - n)
            return buffer
        }
    }
}
