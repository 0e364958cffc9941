// Writing: handlers append their answers to the connection's output
// buffer; the loop sends it at the end of the event batch (`flush`).
extension SocketConnection {
    /// Appends `bytes` to the output buffer. Ignored unless `isOpen`.
    public func write(_ bytes: UnsafeRawBufferPointer) {
        eventLoop.assertInEventLoop()
        guard isOpen, !bytes.isEmpty, appendWebSocketHeader(payloadLength: bytes.count, to: &output) else { return }
        output.append(contentsOf: bytes)
        queueFlush()
    }

    /// Appends `bytes` to the output buffer. Ignored unless `isOpen`.
    public func write(_ bytes: [UInt8]) {
        eventLoop.assertInEventLoop()
        guard isOpen, !bytes.isEmpty, appendWebSocketHeader(payloadLength: bytes.count, to: &output) else { return }
        output.append(contentsOf: bytes)
        queueFlush()
    }

    /// Appends `bytes` to the output buffer, without copying them when
    /// nothing is pending: the connection then takes the array and hands its
    /// own empty buffer back in `bytes` (with its capacity), so that a
    /// handler that writes whole batches this way passes two buffers back
    /// and forth, and neither is copied or grown again in steady use.
    /// Otherwise the bytes are copied. Either way `bytes` comes back empty;
    /// ignored (but emptied) unless `isOpen`.
    public func write(taking bytes: inout [UInt8]) {
        eventLoop.assertInEventLoop()
        defer { bytes.removeAll(keepingCapacity: true) }
        guard isOpen, !bytes.isEmpty else { return }
        if output.isEmpty && webSocket == nil {
            swap(&output, &bytes)
            outputSent = 0
        } else if appendWebSocketHeader(payloadLength: bytes.count, to: &output) {
            output.append(contentsOf: bytes)
        }
        queueFlush()
    }

    /// Lets `body` append to the output buffer in place (e.g. encode a frame
    /// straight into it). Append only: bytes already in the buffer when
    /// `body` starts belong to earlier writes. If the connection is not open,
    /// `body` gets a scratch buffer that is thrown away.
    public func withOutputBuffer<R>(_ body: (inout [UInt8]) throws -> R) rethrows -> R {
        eventLoop.assertInEventLoop()
        guard isOpen else {
            var scratch: [UInt8] = []
            return try body(&scratch)
        }
        // Move the buffer out so `body` may call back into the connection
        // (write, pendingOutputBytes, close) without overlapping access.
        var buffer: [UInt8] = []
        swap(&buffer, &output)
        let before = buffer.count
        callbackDepth += 1
        defer {
            if webSocket != nil { frameWebSocketOutput(&buffer, from: before) }
            if !output.isEmpty { buffer.append(contentsOf: output) }  // writes made inside body
            output = buffer
            callbackDepth -= 1
            if output.count != before { queueFlush() }
            callbackDidReturn()
        }
        return try body(&buffer)
    }
}
