import ChecklistSocket
import ChecklistTLS
#if canImport(Glibc)
import Glibc
#endif

extension TLSChannel {
    /// Runs the client's TLS handshake on a freshly connected blocking
    /// socket, waiting at most until `deadline`, and returns the channel
    /// for the connection. Blocks the calling thread.
    ///
    /// - Throws: `ClientError` `.certificateRejected`, `.tlsFailed` (also
    ///   for a configuration that does not load), `.timeout`, or
    ///   `.connectionClosed` if the server hangs up first. The socket is
    ///   left open; the caller closes it.
    static func handshake(fd: Int32, configuration: TLSClientConfiguration, host: String, port: UInt16,
                          deadline: ContinuousClock.Instant) throws(ClientError) -> TLSChannel {
        let target = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let session = try mapped { () throws(TLSError) in
            try TLSSession(client: TLSContext(client: configuration), serverName: host)
        }
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: readSize, alignment: 16)
        defer { input.deallocate() }
        do throws(ClientError) {
            while true {
                let progress = try mapped { () throws(TLSError) in try session.handshake() }
                try sendAll(takeAll(from: session), fd: fd, target: target)
                switch progress {
                case .complete:
                    return TLSChannel(fd: fd, session: session)
                case .wantsOutputTaken:
                    continue
                case .wantsInput:
                    try TCPConnect.waitReady(fd, for: Int16(POLLIN), deadline: deadline,
                                             what: "the TLS handshake with \(target)")
                    try receive(into: input, session: session, fd: fd, target: target)
                }
            }
        } catch {
            // Send the alert that says why, if there is one; never wait for it.
            let alert = takeAll(from: session)
            if !alert.isEmpty {
                _ = alert.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) }
            }
            if error.code == .timeout || error.code == .connectionClosed { throw error }
            throw ClientError(error.code, "the TLS handshake with \(target) failed: \(error.message)")
        }
    }

    private static func sendAll(_ bytes: [UInt8], fd: Int32, target: String) throws(ClientError) {
        do throws(SocketError) {
            try writeAll(fd, bytes)
        } catch {
            throw ClientError(.connectionClosed, "the TLS handshake with \(target) failed: \(error)")
        }
    }

    private static func receive(into input: UnsafeMutableRawBufferPointer, session: TLSSession, fd: Int32, target: String) throws(ClientError) {
        let got: SocketReadResult
        do throws(SocketError) {
            got = try readSocket(fd, into: input)
        } catch {
            throw ClientError(.connectionClosed, "the TLS handshake with \(target) failed: \(error)")
        }
        switch got {
        case .wouldBlock:
            return
        case .endOfFile:
            session.endOfInput()
        case .bytes(let n):
            _ = try mapped { () throws(TLSError) in try session.feed(UnsafeRawBufferPointer(rebasing: input[..<n])) }
        }
    }
}
