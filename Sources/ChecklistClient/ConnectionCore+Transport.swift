import ChecklistSocket

extension ConnectionCore {
    /// Writes whole frames to the socket, through TLS if the connection
    /// uses it. Call under `output`.
    func transmit(_ bytes: [UInt8]) throws(ClientError) {
        if let tls {
            try tls.write(bytes)
            return
        }
        do throws(SocketError) {
            try writeAll(fd, bytes)
        } catch {
            throw ClientError(.connectionClosed, "the connection was lost: \(error)")
        }
    }

    /// One read of frame bytes (plaintext) for the reader thread, through
    /// TLS if the connection uses it.
    func receive(into buffer: UnsafeMutableRawBufferPointer) throws(ClientError) -> SocketReadResult {
        if let tls {
            return try tls.read(into: buffer)
        }
        do throws(SocketError) {
            return try readSocket(fd, into: buffer)
        } catch {
            throw ClientError(.connectionClosed, "the connection was lost: \(error)")
        }
    }
}
