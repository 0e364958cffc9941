import ChecklistSocket
import ChecklistTLS

/// One load connection's TLS layer: its client session and the ciphertext
/// the session made that the non-blocking socket has not taken yet. Owned
/// by one `LoadConnection`, on its worker's thread only.
final class LoadTLS {
    let session: TLSSession
    private var ciphertext: [UInt8] = []
    private var ciphertextSent = 0

    init(context: TLSContext, serverName: String) throws(TLSError) {
        session = try TLSSession(client: context, serverName: serverName)
    }

    /// Whether ciphertext waits for the socket.
    var hasPendingOutput: Bool { ciphertextSent < ciphertext.count || session.pendingOutput > 0 }

    /// Encrypts as much of `plaintext` as the session takes now; returns
    /// how many bytes it took.
    func encrypt(_ plaintext: UnsafeRawBufferPointer) throws(TLSError) -> Int {
        guard session.outputSpace > 0 else { return 0 }
        return try session.writePlaintext(plaintext)
    }

    /// Writes what the socket takes of the pending ciphertext; returns how
    /// many bytes went out.
    func write(_ fd: Int32) throws(SocketError) -> Int {
        collect()
        guard ciphertextSent < ciphertext.count else { return 0 }
        let result = ciphertext.withUnsafeBytes { raw in
            Result { () throws(SocketError) in try writeSocket(fd, from: UnsafeRawBufferPointer(rebasing: raw[ciphertextSent...])) }
        }
        guard case .bytes(let n) = try result.get() else { return 0 }
        ciphertextSent += n
        if ciphertextSent == ciphertext.count {
            ciphertext.removeAll(keepingCapacity: true)
            ciphertextSent = 0
        }
        return n
    }

    /// Moves the session's pending output behind what is already waiting.
    private func collect() {
        let count = session.pendingOutput
        guard count > 0 else { return }
        let start = ciphertext.count
        ciphertext += repeatElement(0, count: count)
        let taken = ciphertext.withUnsafeMutableBytes { session.takeOutput(into: UnsafeMutableRawBufferPointer(rebasing: $0[start...])) }
        ciphertext.removeLast(count - taken)
    }

    /// How much ciphertext `feed` accepts now.
    var inputSpace: Int { session.inputSpace }

    /// Hands ciphertext read from the socket to the session (at most `inputSpace` bytes).
    func feed(_ bytes: UnsafeRawBufferPointer) throws(TLSError) {
        var fed = 0
        while fed < bytes.count {
            let took = try session.feed(UnsafeRawBufferPointer(rebasing: bytes[fed...]))
            guard took > 0 else { throw TLSError(.protocolViolation, "the server's TLS records overflow the session's input buffer") }
            fed += took
        }
    }
}
