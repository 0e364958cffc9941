import ChecklistTLS
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
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
        let channel = TLSChannel(fd: fd, session: try mapped { () throws(TLSError) in
            try TLSSession(client: TLSContext(client: configuration), serverName: host)
        })
        do throws(ClientError) {
            while true {
                let progress = try mapped { () throws(TLSError) in
                    try channel.withSession { (s) throws(TLSError) in try s.handshake() }
                }
                try channel.sendPending()
                switch progress {
                case .complete:
                    return channel
                case .wantsOutputTaken:
                    continue
                case .wantsInput:
                    try TCPConnect.waitReady(fd, for: Int16(POLLIN), deadline: deadline,
                                             what: "the TLS handshake with \(target)")
                    try channel.receiveCiphertext()
                }
            }
        } catch {
            channel.sendPendingWithoutWaiting()  // the alert that says why, if any
            if error.code == .timeout { throw error }
            throw ClientError(error.code, TLSError.naming(target, in: error.message))
        }
    }
}
