import ChecklistModel
import ChecklistWire

/// How far an EXPORT or IMPORT has come.
public struct SnapshotTransferProgress: Hashable, Sendable {
    /// Bytes of the snapshot file moved so far (compressed).
    public var bytes: UInt64
    /// Uncompressed snapshot bytes the server produced (export) or decoded
    /// (import) so far.
    public var rawBytes: UInt64
    /// Items written (export) or decoded (import) so far.
    public var items: UInt64
    /// Items in the whole export; nil for an import (unknown until the end).
    public var totalItems: UInt64?
    /// Lists in the export; lists decoded so far for an import.
    public var lists: UInt64
}

/// What an EXPORT sent.
public struct ExportSummary: Hashable, Sendable {
    public var lists: UInt64
    public var items: UInt64
    /// Uncompressed snapshot bytes.
    public var rawBytes: UInt64
    /// Bytes of the snapshot file.
    public var compressedBytes: UInt64
    /// EXPORT_CHUNK answers received.
    public var chunks: Int
}

/// EXPORT and IMPORT (Protocol/SPEC.md sections 6.16-6.17): whole snapshots
/// in and out, a chunk per request, with up to `window` requests in flight
/// so that the server works on the next chunk while this side handles the
/// last one.
extension ChecklistConnection {
    /// Streams a snapshot of the connection's lists (of `lists` only, when
    /// not empty) to `write`, one piece of the file at a time, in order;
    /// concatenated they are the snapshot file (gzip). The snapshot is the
    /// lists as they were when the server took the request, all at one
    /// instant.
    ///
    /// - Parameters:
    ///   - chunkBytes: most data per chunk (0: the server's size, 1 MiB for `checklistd`).
    ///   - window: EXPORT requests in flight, at least 1.
    ///   - progress: called after every chunk.
    ///   - write: receives each chunk's data; a throw cancels the export
    ///     on the server and is rethrown.
    /// - Throws: `ClientError` (`.server` with `NOT_FOUND` for a list the
    ///   namespace does not have, `BAD_STATE` if an export is already
    ///   running on this connection), or what `write` threw.
    @discardableResult
    public func exportSnapshot(lists: [ListID] = [], chunkBytes: Int = 0, window: Int = 2,
                               progress: (SnapshotTransferProgress) -> Void = { _ in },
                               write: ([UInt8]) throws -> Void) async throws -> ExportSummary {
        var pipeline = AnswerPipeline(connection: self)
        defer { pipeline.finish() }
        try pipeline.send(.export(Export(.start(chunkBytes: UInt64(max(0, chunkBytes)), lists: lists))))
        var requested: UInt64 = 0
        var summary = ExportSummary(lists: 0, items: 0, rawBytes: 0, compressedBytes: 0, chunks: 0)
        var ended = false
        do {
            while !ended {
                // Keep `window` requests in flight until the last chunk is in.
                while pipeline.outstanding < max(1, window) {
                    requested += 1
                    try pipeline.send(.export(Export(.next(sequence: requested))))
                }
                let answer = try await pipeline.next()
                guard case .exportChunk(let chunk) = answer else {
                    if case .error(let message) = answer { throw ClientError.server(message.error) }
                    throw ClientError(.protocolViolation, "expected EXPORT_CHUNK, the server answered with message type \(answer.type)")
                }
                guard chunk.sequence == UInt64(summary.chunks), chunk.status != .cancelled else {
                    throw ClientError(.protocolViolation, "EXPORT_CHUNK \(chunk.sequence) (status \(chunk.status)) arrived, chunk \(summary.chunks) was expected")
                }
                try write(chunk.data)
                summary.chunks += 1
                summary.compressedBytes += UInt64(chunk.data.count)
                summary.rawBytes = chunk.rawBytes
                summary.lists = chunk.listCount
                summary.items = chunk.itemsWritten
                progress(SnapshotTransferProgress(bytes: summary.compressedBytes, rawBytes: chunk.rawBytes, items: chunk.itemsWritten,
                                                  totalItems: chunk.itemCount, lists: chunk.listCount))
                ended = chunk.status == .end
            }
        } catch {
            // Frees the server's side, unless the export already ended there.
            try? pipeline.send(.export(Export(.cancel)))
            await pipeline.drain()
            throw error
        }
        // NEXTs sent past the last chunk are answered BAD_STATE: harmless.
        await pipeline.drain()
        return summary
    }

    /// Streams a snapshot file to the server, which applies it atomically
    /// when it is complete: every list in it, or none and an error naming
    /// what was wrong (Protocol/SPEC.md section 6.17).
    ///
    /// - Parameters:
    ///   - mode: `.merge` adds the lists (replacing those with their ids);
    ///     `.replace` makes the namespace hold exactly the snapshot's lists.
    ///   - chunkBytes: data per IMPORT request (at most the server's frame).
    ///   - window: IMPORT requests in flight, at least 1.
    ///   - progress: called after every chunk the server decoded.
    ///   - read: returns the next bytes of the file, at most the count it is
    ///     given, or nil at the end.
    /// - Returns: the server's IMPORT_OK for END (status APPLIED): lists and
    ///   items applied, lists deleted, lists that got another id.
    /// - Throws: `ClientError.server` with the server's error (e.g.
    ///   `BAD_FIELD data` for a corrupt or truncated snapshot,
    ///   `LIMIT_EXCEEDED data` past the server's bounds), or what `read` threw.
    @discardableResult
    public func importSnapshot(mode: Import.Mode, chunkBytes: Int = 1 << 20, window: Int = 4,
                               progress: (SnapshotTransferProgress) -> Void = { _ in },
                               read: (Int) throws -> [UInt8]?) async throws -> ImportOK {
        var pipeline = AnswerPipeline(connection: self)
        defer { pipeline.finish() }
        let size = max(1, min(chunkBytes, Int(serverLimits.maxFrameBytes) - 64))
        try pipeline.send(.import(Import(.begin(mode: mode))))
        do {
            _ = try Self.importAnswer(try await pipeline.next(), .started)
            var sequence: UInt64 = 0
            var sent: UInt64 = 0
            var atEnd = false
            while true {
                while !atEnd && pipeline.outstanding < max(1, window) {
                    guard let bytes = try read(size), !bytes.isEmpty else {
                        atEnd = true
                        break
                    }
                    sequence += 1
                    sent += UInt64(bytes.count)
                    try pipeline.send(.import(Import(.data(sequence: sequence, bytes: bytes))), compress: false)
                }
                if pipeline.outstanding == 0 { break }
                let ok = try Self.importAnswer(try await pipeline.next(), .received)
                progress(SnapshotTransferProgress(bytes: sent, rawBytes: ok.rawBytes, items: ok.items, totalItems: nil,
                                                  lists: ok.lists))
            }
            try pipeline.send(.import(Import(.end)))
            return try Self.importAnswer(try await pipeline.next(), .applied)
        } catch {
            try? pipeline.send(.import(Import(.cancel)))
            await pipeline.drain()
            throw error
        }
    }

    private static func importAnswer(_ answer: ServerMessage, _ expected: ImportOK.Status) throws -> ImportOK {
        switch answer {
        case .importOK(let ok) where ok.status == expected:
            return ok
        case .error(let message):
            throw ClientError.server(message.error)
        default:
            throw ClientError(.protocolViolation, "expected IMPORT_OK \(expected), the server answered \(answer.type)")
        }
    }
}

/// Requests written in order whose answers come back decoded, in order
/// (the server answers a connection's requests in the order it read them).
private struct AnswerPipeline {
    private let core: ConnectionCore
    private let limit: UInt32
    private let continuation: AsyncStream<Result<ServerMessage, ClientError>>.Continuation
    private var iterator: AsyncStream<Result<ServerMessage, ClientError>>.Iterator
    /// Requests sent whose answers were not taken yet.
    private(set) var outstanding = 0

    init(connection: ChecklistConnection) {
        core = connection.core
        limit = connection.receiveLimit
        let (stream, continuation) = AsyncStream.makeStream(of: Result<ServerMessage, ClientError>.self)
        self.continuation = continuation
        iterator = stream.makeAsyncIterator()
    }

    mutating func send(_ request: Request, compress: Bool = true) throws(ClientError) {
        let continuation = self.continuation
        let limit = self.limit
        try core.send(request, compress: compress) { result in
            switch result {
            case .success(let (header, body)):
                do {
                    continuation.yield(.success(try ServerMessage.decode(header: header, body: body, maxFrameBytes: limit)))
                } catch {
                    continuation.yield(.failure(ClientError(.protocolViolation, "an answer did not decode: \(error)")))
                }
            case .failure(let error):
                continuation.yield(.failure(error))
            }
        }
        outstanding += 1
    }

    /// The next answer, in request order.
    mutating func next() async throws -> ServerMessage {
        guard outstanding > 0 else { throw ClientError(.protocolViolation, "no answer is awaited") }
        guard let result = await iterator.next() else { throw CancellationError() }
        outstanding -= 1
        return try result.get()
    }

    /// Takes the answers still due, ignoring them.
    mutating func drain() async {
        while outstanding > 0 {
            guard await iterator.next() != nil else { return }
            outstanding -= 1
        }
    }

    func finish() {
        continuation.finish()
    }
}
