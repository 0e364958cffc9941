import ChecklistFrames
import ChecklistModel
import ChecklistSocket
import ChecklistThreads
import ChecklistWire

/// One TCP connection to a `checklistd` server, speaking protocol v1.
///
/// Every method may be called concurrently from many tasks: each request
/// gets a fresh request id, its frame is queued whole (never interleaved)
/// for the process's I/O thread to write, and that thread matches every
/// answer to its waiting caller by id, so requests are pipelined on the one
/// connection. No call waits on a socket: a server that stops reading fills
/// the connection's bounded send queue, and then requests fail at once
/// with `ClientError.sendQueueFull`.
///
/// ```swift
/// let connection = try await ChecklistConnection.connect(host: "127.0.0.1", port: 7420,
///                                                        clientName: "my-app/1.0")
/// defer { Task { await connection.close() } }
/// let groceries = try await connection.createList(name: "Groceries", icon: "Groceries")
/// try await connection.patch(groceries.id, ops: [
///     .insert(tempRef: 1, position: .end, fields: ItemFields(text: "Milk")),
/// ])
/// ```
///
/// When the connection drops (or `close()` is called) every waiting call
/// fails with `ClientError.Code.connectionClosed` and later calls fail at
/// once. Dropping the last reference also closes the socket.
public final class ChecklistConnection: Sendable {
    /// The protocol versions this client speaks.
    public static let supportedVersions: ClosedRange<UInt64> = 1...1

    /// The limits the server announced in HELLO_OK.
    public let serverLimits: Limits
    /// The server's name from HELLO_OK, e.g. `checklistd/1.0`.
    public let serverName: String
    /// The protocol version the handshake chose.
    public let version: UInt64
    /// The features the server announced in HELLO_OK.
    public let serverFeatures: Features
    /// Whether both sides agreed on compression: the server may send
    /// compressed bodies and this client compresses large requests.
    public let compressionEnabled: Bool
    /// The time limit of each high-level request method, or nil for none.
    /// `send(_:)` and `send(batch:)` are never timed.
    public let requestTimeout: Duration?
    /// The TLS version in use, or nil for a plaintext connection.
    public let tlsVersion: TLSVersion?
    /// The verified subject of the server's certificate (RFC 2253, e.g.
    /// `CN=localhost,O=Example`), or nil for a plaintext connection.
    public let tlsServerSubject: String?
    /// The server this connection was made to (the host and port given to
    /// `connect`, or the one of `connect(servers:)`'s list that answered).
    public let server: ServerAddress

    let core: ConnectionCore

    private init(core: ConnectionCore, server: ServerAddress, hello: HelloOK, compression: Bool, requestTimeout: Duration?) {
        self.server = server
        self.tlsVersion = core.tlsVersion
        self.tlsServerSubject = core.tlsPeerSubject
        self.core = core
        self.serverLimits = hello.limits
        self.serverName = hello.serverName
        self.version = hello.version
        self.serverFeatures = hello.features
        self.compressionEnabled = compression
        self.requestTimeout = requestTimeout
    }

    deinit {
        core.beginClose(ClientError(.connectionClosed, "the connection was released"))
    }

    /// Opens a TCP connection, sends HELLO (versions 1...1) and waits for
    /// HELLO_OK.
    ///
    /// - Parameters:
    ///   - host: A host name or a numeric IPv4/IPv6 address (brackets allowed).
    ///   - port: The server's TCP port (7420 by default for `checklistd`).
    ///   - clientName: Free text for the server's logs, e.g. `my-app/1.0`.
    ///   - token: The access token, sent in HELLO. A server with access
    ///     control requires one (it chooses the namespace of every request);
    ///     a server without ignores it. A missing or unknown token fails
    ///     with `.server` and wire code `NOT_AUTHENTICATED`.
    ///   - compression: Announce COMPRESSION: the server may then compress
    ///     answers of 1 KiB or more, and this client compresses such requests
    ///     if the server announced it too.
    ///   - timeout: The time allowed for resolving, connecting and the handshake.
    ///   - requestTimeout: If set, each high-level request method fails with
    ///     `.timeout` when its answer takes longer.
    ///   - tls: Speak TLS (1.2 or 1.3) below the protocol: the server's
    ///     certificate must verify against the configuration's CA file (by
    ///     default the system's trust store) and name `host` (or the
    ///     configuration's `serverName`), or the connection is refused. A
    ///     client certificate is sent if configured. nil: plaintext. A TLS
    ///     connection never falls back to plaintext.
    /// - Throws: `ClientError` with `.connectionFailed` (cannot reach the
    ///   server), `.timeout`, `.server` (e.g. `UNSUPPORTED_VERSION`),
    ///   `.connectionClosed`, `.protocolViolation`, and with `tls`:
    ///   `.certificateRejected` (a certificate did not verify; the message
    ///   says why) or `.tlsFailed`.
    public static func connect(host: String, port: UInt16, clientName: String, token: String? = nil,
                               compression: Bool = true, timeout: Duration = .seconds(10),
                               requestTimeout: Duration? = nil,
                               tls: TLSClientConfiguration? = nil) async throws -> ChecklistConnection {
        try await connect(host: host, port: port, clientName: clientName, token: token, compression: compression,
                          timeout: timeout, requestTimeout: requestTimeout, tls: tls, io: nil)
    }

    /// `connect`, on the I/O thread `io` (tests give their own; nil: the
    /// process's) with a send queue of `sendQueueLimit` bytes.
    static func connect(host: String, port: UInt16, clientName: String, token: String? = nil,
                        compression: Bool = true, timeout: Duration = .seconds(10),
                        requestTimeout: Duration? = nil, tls: TLSClientConfiguration? = nil,
                        io: IOThread?, sendQueueLimit: Int = OutputQueue.defaultLimit) async throws -> ChecklistConnection {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let connected: Result<(HandedStream, IOThread), ClientError>
        do {
            // Off the cooperative pool: the connect (and a TLS handshake) blocks until `deadline`.
            connected = try await NativeThread.result(ofBlocking: { () throws(ClientError) -> (HandedStream, IOThread) in
                let thread: IOThread
                if let io { thread = io } else { thread = try IOThread.shared() }
                let stream = try FrameStream.connect(host: host, port: port, tls: tls, deadline: deadline)
                return (HandedStream(stream: stream), thread)
            }, name: "checklist-connect")
        } catch {
            throw ClientError(.connectionFailed, error.description)
        }
        let (stream, thread) = try connected.get()
        let core = ConnectionCore(stream: stream, io: thread, sendQueueLimit: sendQueueLimit)
        core.start()
        do {
            let hello = Hello(minVersion: supportedVersions.lowerBound, maxVersion: supportedVersions.upperBound,
                              features: compression ? [.compression, .clientKeys] : [.clientKeys], clientName: clientName,
                              token: token)
            let answer = try await withTimeout(ContinuousClock.now.duration(to: deadline),
                                               "the handshake with \(host):\(port) (limit \(timeout))") {
                try await core.send(.hello(hello))
            }
            switch answer {
            case .helloOK(let ok):
                guard supportedVersions.contains(ok.version) else {
                    throw ClientError(.protocolViolation, "the server chose protocol version \(ok.version), outside \(supportedVersions)")
                }
                let compress = compression && ok.features.contains(.compression)
                core.serverMaxFrameBytes.store(ok.limits.maxFrameBytes, ordering: .relaxed)
                core.compressOutgoing.store(compress, ordering: .relaxed)
                return ChecklistConnection(core: core, server: ServerAddress(host: bare(host), port: port),
                                           hello: ok, compression: compress, requestTimeout: requestTimeout)
            case .error(let message):
                throw ClientError.server(message.error)
            default:
                throw ClientError(.protocolViolation, "the server answered HELLO with message type \(answer.type)")
            }
        } catch {
            core.beginClose(ClientError(.connectionClosed, "the handshake failed"))
            await core.waitUntilClosed()
            if let error = error as? ClientError,
               [.connectionClosed, .protocolViolation, .tlsFailed, .certificateRejected].contains(error.code) {
                // E.g. something that is not checklistd answered: say where.
                throw ClientError(error.code, "the handshake with \(host):\(port) failed: \(error.message)")
            }
            throw error
        }
    }

    /// Closes the connection: waiting calls fail with `.connectionClosed`,
    /// later calls fail at once. Returns when the socket is closed and the
    /// I/O thread has closed the socket. Idempotent.
    public func close() async {
        core.beginClose(ClientError(.connectionClosed, "the connection was closed by the client"))
        await core.waitUntilClosed()
    }

    /// True once the connection is closed or closing.
    public var isClosed: Bool { core.isClosing }

    /// True once the server said goodbye with `SHUTTING_DOWN` (Protocol/SPEC.md
    /// section 1): it answers what it read and closes; send nothing new.
    public var serverIsShuttingDown: Bool {
        core.state.withLock { $0.goodbye?.code == .shuttingDown }
    }

    // MARK: Low-level pipelined entry points

    /// Sends one request with a fresh request id and returns the server's
    /// answer as it arrived. A server `ERROR` is returned as `.error`, not
    /// thrown; the answer's type is not checked.
    ///
    /// Do not send `.hello`: the handshake is done by `connect`.
    ///
    /// - Throws: `ClientError` `.connectionClosed`, `.protocolViolation`
    ///   (the answer did not decode) or `.requestTooLarge`;
    ///   `CancellationError` when the task is cancelled while waiting.
    public func send(_ request: Request) async throws -> ServerMessage {
        try await core.send(request)
    }

    /// Sends all `requests` in one write (each with its own fresh request id)
    /// and waits for every answer. The answers are in the order of
    /// `requests`; server `ERROR`s are returned as `.error`, not thrown.
    ///
    /// - Throws: as `send(_:)`; if one answer fails to decode the whole
    ///   batch fails with `.protocolViolation`.
    public func send(batch requests: [Request]) async throws -> [ServerMessage] {
        try await core.sendBatch(requests)
    }

    /// Receives server pushes (frames with request id 0, e.g. live-sync
    /// changes once the server sends them): the raw header and body. Runs
    /// on the I/O thread; it must return quickly. Connection-level ERROR
    /// frames (id 0) are passed on too, after being kept as the close reason.
    /// Package-internal until live sync defines the push messages.
    package func setPushHandler(_ handler: (@Sendable (FrameHeader, [UInt8]) -> Void)?) {
        core.setPushHandler(handler)
    }
}

/// `host` without the brackets of a bracketed IPv6 address.
private func bare(_ host: String) -> String {
    host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
}

/// Runs `body`, failing with `ClientError.Code.timeout` if it takes longer
/// than `limit` (the body is then cancelled).
func withTimeout<T: Sendable>(_ limit: Duration, _ what: String,
                              _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw ClientError(.timeout, "\(what) timed out")
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
