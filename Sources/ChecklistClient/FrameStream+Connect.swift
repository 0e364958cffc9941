import ChecklistFrames
import ChecklistSocket
import ChecklistTLS

extension FrameStream {
    /// Connects to `host`:`port` (`TCPConnect`) and, with `tls`, runs the
    /// client's TLS handshake, all before `deadline`; returns the stream of
    /// a connection, for the I/O thread. Blocks the calling thread: call it
    /// off the async executor.
    ///
    /// - Throws: `ClientError` `.connectionFailed`, `.timeout`, and with
    ///   `tls`: `.certificateRejected`, `.tlsFailed` (also for a
    ///   configuration that does not load) or `.connectionClosed` if the
    ///   server hangs up first. Nothing stays open.
    static func connect(host: String, port: UInt16, tls: TLSClientConfiguration?,
                        deadline: ContinuousClock.Instant) throws(ClientError) -> FrameStream {
        let fd = try TCPConnect.connect(host: host, port: port, deadline: deadline)
        let stream: FrameStream
        do throws(ClientError) {
            let session: TLSSession?
            do throws(TLSError) {
                session = try tls.map { (configuration) throws(TLSError) in
                    try TLSSession(client: TLSContext(client: configuration), serverName: host)
                }
            } catch {
                throw ClientError(tls: error)
            }
            // The connection's own queue (`OutputQueue`) is the bound; the
            // stream holds what the I/O thread moved into it.
            do throws(FrameStreamError) {
                stream = try FrameStream(fd: fd, tls: session, sendLimit: .max)
            } catch {
                throw ClientError(.ioFailed, "cannot make the socket non-blocking: \(error)")
            }
        } catch {
            closeSocket(fd)
            throw error
        }
        guard tls != nil else { return stream }
        let target = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)"
        do throws(FrameStreamError) {
            try stream.handshake(deadline: deadline)
        } catch {
            stream.close(notify: false)
            if error.code == .timedOut { throw ClientError(.timeout, "the TLS handshake with \(target): timed out") }
            let failure = ClientError(error)
            throw ClientError(failure.code, TLSError.naming(target, in: failure.message))
        }
        return stream
    }
}
