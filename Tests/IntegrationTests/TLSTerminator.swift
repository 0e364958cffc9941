import ChecklistSocket
import ChecklistTLS
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An in-process TLS front for a plaintext `checklistd`: accepts TLS on
/// 127.0.0.1 (port 0) with ChecklistTLS's server session and relays the
/// plaintext to the backend port. With a client context
/// (`originating(to:)`) it works the other way round: accepts plaintext and
/// relays it over TLS to a TLS port (so that plaintext test tools, such as
/// the network fuzzer, can reach `checklistd --tls-cert`). One thread per
/// connection owns its session and both sockets.
final class TLSTerminator: Sendable {
    struct Seen: Sendable {
        /// The verified client certificate subject of each completed handshake (nil: none).
        var subjects: [String?] = []
        /// The TLS failures of refused connections.
        var failures: [TLSError] = []
        /// How many clients ended with close_notify.
        var closeNotifies = 0
        var stopped = false
        var openDescriptors: Set<Int32> = []
    }

    let port: UInt16
    private let listenFD: Int32
    private let context: TLSContext
    private let backendPort: UInt16
    /// The `checklistd` started for this front by `start`, stopped with it.
    private let backend: TestServer?
    let seen = Mutex(Seen())
    /// Signalled once per completed handshake, after its subject is in `seen`.
    let handshakes = DispatchSemaphore(value: 0)
    /// Signalled once per relayed connection when it has ended.
    let ends = DispatchSemaphore(value: 0)

    /// Starts a `checklistd` and a front for it with `configuration`.
    static func start(_ configuration: TLSServerConfiguration) throws -> TLSTerminator {
        let server = try TestServer.start()
        do {
            return try TLSTerminator(context: TLSContext(server: configuration), backendPort: server.port, backend: server)
        } catch {
            server.stop()
            throw error
        }
    }

    /// A plaintext front that relays over TLS (with `configuration`) to `port`.
    static func originating(to port: UInt16, _ configuration: TLSClientConfiguration) throws -> TLSTerminator {
        try TLSTerminator(context: TLSContext(client: configuration), backendPort: port)
    }

    init(context: TLSContext, backendPort: UInt16, backend: TestServer? = nil) throws {
        let (fd, port) = try makeListeningSocket(host: "127.0.0.1", port: 0)
        try setNonBlocking(fd, false)
        self.listenFD = fd
        self.port = port
        self.context = context
        self.backendPort = backendPort
        self.backend = backend
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Stops accepting, cuts every relayed connection and stops the backend `start` made.
    func stop() {
        seen.withLock { s in
            s.stopped = true
            for fd in s.openDescriptors { try? shutdownSocket(fd, .both) }
        }
        try? shutdownSocket(listenFD, .both)  // wakes the blocking accept
        backend?.stop()
    }

    private func acceptLoop() {
        while let accepted = try? acceptConnection(listenFD) {
            if seen.withLock({ $0.stopped }) { closeSocket(accepted.fd); break }
            let thread = Thread { [self] in relay(accepted.fd) }
            thread.start()
        }
        closeSocket(listenFD)
    }

    private func track(_ fd: Int32, open: Bool) {
        seen.withLock { s in
            if open { s.openDescriptors.insert(fd) } else { s.openDescriptors.remove(fd) }
        }
    }

    /// One connection: the TLS handshake, then plaintext both ways until either side ends.
    private func relay(_ client: Int32) {
        track(client, open: true)
        defer { track(client, open: false); closeSocket(client); ends.signal() }
        guard (try? setNonBlocking(client, false)) != nil,
              let backend = try? connectSocket(host: "127.0.0.1", port: backendPort),
              let session = try? (context.role == .server ? TLSSession(server: context)
                                                              : TLSSession(client: context, serverName: "localhost")) else { return }
        track(backend, open: true)
        defer { track(backend, open: false); closeSocket(backend) }
        // Originating: the accepted socket is the plaintext side, the connected one the TLS side.
        var pipe = context.role == .server ? RelayPipe(session: session, client: client, backend: backend)
                                           : RelayPipe(session: session, client: backend, backend: client)
        do {
            try pipe.run { subject in
                self.seen.withLock { $0.subjects.append(subject) }
                self.handshakes.signal()
            }
        } catch let error as TLSError {
            seen.withLock { $0.failures.append(error) }
        } catch {
            // The socket went away: nothing to record.
        }
        pipe.flush()
        if session.closeReceived { seen.withLock { $0.closeNotifies += 1 } }
    }
}

/// The bytes of one relayed connection, moved by one thread.
private struct RelayPipe {
    let session: TLSSession
    let client: Int32
    let backend: Int32
    private var buffer = [UInt8](repeating: 0, count: 32 << 10)

    init(session: TLSSession, client: Int32, backend: Int32) {
        self.session = session
        self.client = client
        self.backend = backend
    }

    /// Relays until either side ends; `established` gets the client's
    /// certificate subject once the handshake is complete.
    /// A client session starts the handshake; after the plaintext side
    /// ends it sends close_notify and relays the TLS side's last answers
    /// until that side ends too.
    mutating func run(established: (String?) -> Void) throws {
        var handshaking = true
        var plaintextEnded = false
        if session.role == .client {
            _ = try session.handshake()
            flush()
        }
        while true {
            var fds = [pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: backend, events: handshaking || plaintextEnded ? 0 : Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, -1) > 0 else { continue }
            if fds[0].revents != 0 {
                guard try fromClient() else { return }
                if handshaking, try session.handshake() == .complete {
                    handshaking = false
                    established(session.peerCertificateSubject)
                }
                flush()
                if !handshaking, try !plaintextToBackend() { return }
            }
            // (poll reports a hang-up even for a side it was not asked to watch.)
            if fds[1].revents != 0 && !handshaking && !plaintextEnded, try !backendToClient() {
                session.close()
                guard session.role == .client else { return }
                flush()
                plaintextEnded = true
            }
        }
    }

    /// Reads ciphertext from the client into the session; false at its end of file.
    private mutating func fromClient() throws -> Bool {
        guard case .bytes(let n) = try buffer.withUnsafeMutableBytes({ try readSocket(client, into: $0) }) else {
            session.endOfInput()
            return false
        }
        var fed = 0
        while fed < n { fed += try buffer[fed..<n].withUnsafeBytes { try session.feed($0) } }
        return true
    }

    /// Decrypts everything available and writes it to the backend; false once the client sent close_notify.
    private mutating func plaintextToBackend() throws -> Bool {
        while true {
            switch try buffer.withUnsafeMutableBytes({ try session.readPlaintext(into: $0) }) {
            case .bytes(let n): try writeAll(backend, Array(buffer[..<n]))
            case .wantsInput: return true
            case .closed: return false
            }
        }
    }

    /// Encrypts what the backend sent; false at its end of file.
    private mutating func backendToClient() throws -> Bool {
        guard case .bytes(let n) = try buffer.withUnsafeMutableBytes({ try readSocket(backend, into: $0) }) else { return false }
        var offset = 0
        while offset < n {
            offset += try buffer[offset..<n].withUnsafeBytes { try session.writePlaintext($0) }
            flush()
        }
        return true
    }

    /// Sends whatever the session has for the client (best effort).
    func flush() {
        var pending = [UInt8](repeating: 0, count: session.pendingOutput)
        let n = pending.withUnsafeMutableBytes { session.takeOutput(into: $0) }
        if n > 0 { try? writeAll(client, Array(pending[..<n])) }
    }
}
