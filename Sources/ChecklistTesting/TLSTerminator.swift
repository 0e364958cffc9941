import ChecklistSocket
import ChecklistTLS
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An in-process TLS front for a plaintext `checklistd`, for tests of the
/// TLS clients (the library, the CLI, the conformance runner): accepts TLS
/// on 127.0.0.1 (port 0) with ChecklistTLS's server session and relays the
/// plaintext to the backend port. One thread per connection owns its
/// session and both sockets.
///
/// With a client context (`originating(to:_:)`) it works the other way
/// round: it accepts plaintext and relays it over TLS to a TLS port, so
/// that plaintext test tools (the network fuzzer) can reach
/// `checklistd --tls-cert`.
///
/// Half-closes pass through: when the client ends its side (close_notify,
/// or the end of its stream), the front half-closes the backend and keeps
/// relaying the backend's answers until the backend closes; then it sends
/// close_notify and closes.
public final class TLSTerminator: Sendable {
    /// What the front saw.
    public struct Seen: Sendable {
        /// The verified client certificate subject of each completed handshake (nil: none).
        public var subjects: [String?] = []
        /// The TLS failures of refused connections.
        public var failures: [TLSError] = []
        /// How many clients ended with close_notify.
        public var closeNotifies = 0
        var stopped = false
        var openDescriptors: Set<Int32> = []
    }

    /// The TLS port.
    public let port: UInt16
    private let listenFD: Int32
    private let context: TLSContext
    private let backendPort: UInt16
    /// Run by `stop` (e.g. stopping the backend server started for this front).
    private let onStop: @Sendable () -> Void
    public let seen = Mutex(Seen())
    /// Signalled once per completed handshake, after its subject is in `seen`.
    public let handshakes = DispatchSemaphore(value: 0)
    /// Signalled once per relayed connection when it has ended.
    public let ends = DispatchSemaphore(value: 0)

    /// A plaintext front that relays over TLS (with `configuration`) to the
    /// TLS port 127.0.0.1:`port`.
    public static func originating(to port: UInt16, _ configuration: TLSClientConfiguration) throws -> TLSTerminator {
        try TLSTerminator(context: TLSContext(client: configuration), backendPort: port)
    }

    /// Starts a front on 127.0.0.1 (port 0) for the plaintext server on
    /// 127.0.0.1:`backendPort`; `stop` runs `onStop` last.
    public init(context: TLSContext, backendPort: UInt16, onStop: @escaping @Sendable () -> Void = {}) throws {
        let (fd, port) = try makeListeningSocket(host: "127.0.0.1", port: 0)
        try setNonBlocking(fd, false)
        self.listenFD = fd
        self.port = port
        self.context = context
        self.backendPort = backendPort
        self.onStop = onStop
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Stops accepting, cuts every relayed connection, then runs `onStop`.
    public func stop() {
        seen.withLock { s in
            s.stopped = true
            for fd in s.openDescriptors { try? shutdownSocket(fd, .both) }
        }
        try? shutdownSocket(listenFD, .both)  // wakes the blocking accept
        onStop()
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

    /// Relays until the backend ends (after the client's end, which
    /// half-closes the backend); `established` gets the client's
    /// certificate subject once the handshake is complete.
    ///
    /// A client session (originating) starts the handshake; when its
    /// plaintext side ends it sends close_notify and relays the TLS side's
    /// last answers until that side ends too.
    mutating func run(established: (String?) -> Void) throws {
        var handshaking = true
        var clientEnded = false
        var backendEnded = false
        if session.role == .client {
            _ = try session.handshake()
            flush()
        }
        while true {
            // A negative descriptor is ignored by poll: a side that is done stays quiet.
            var fds = [pollfd(fd: clientEnded ? -1 : client, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: handshaking || backendEnded ? -1 : backend, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, -1) > 0 else { continue }
            if fds[0].revents != 0 {
                let open = try fromClient()
                if handshaking {
                    guard open else { return }
                    if try session.handshake() == .complete {
                        handshaking = false
                        established(session.peerCertificateSubject)
                    }
                }
                flush()
                if !handshaking, try !plaintextToBackend() || !open {
                    if backendEnded { return }
                    clientEnded = true
                    try? shutdownSocket(backend, .write)
                }
            }
            if fds[1].revents != 0, try !backendToClient() {
                session.close()
                guard session.role == .client, !clientEnded else { return }
                flush()
                backendEnded = true
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

    /// Decrypts everything available and writes it to the backend; false
    /// once the client's stream ended (close_notify, or its end of file).
    private mutating func plaintextToBackend() throws -> Bool {
        while true {
            let result: TLSSession.ReadResult
            do {
                result = try buffer.withUnsafeMutableBytes { try session.readPlaintext(into: $0) }
            } catch let error as TLSError where error.code == .truncated {
                return false
            }
            switch result {
            case .bytes(let n): try writeAll(backend, Array(buffer[..<n]))
            case .wantsInput: return !session.inputEnded
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
