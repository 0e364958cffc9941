/// Reads client frames (RFC 6455 section 5) from a byte stream that arrives
/// in pieces of any size, and unmasks the payload of binary messages *in
/// place*: `decode` is given the bytes just read and moves their data
/// payload to the front of the same buffer, so that the connection's input
/// buffer ends up holding the protocol's byte stream and nothing else.
///
/// Nothing is buffered but a split header (at most 14 bytes) and a control
/// frame's payload (at most 125): a message's payload is handed on as it
/// arrives, so a large or slow message costs no memory here. Its length is
/// still bounded (`maxMessageBytes`, close 1009).
///
/// Every breach of the RFC fails the decoder with a `WebSocketError` naming
/// the close code to send; a failed or closed decoder ignores what follows.
/// Pure: no I/O.
public struct WebSocketFrameDecoder: Sendable {
    /// The default bound of one message's payload (Protocol/WEBSOCKET.md).
    public static let defaultMaxMessageBytes = 16 << 20

    /// The most payload bytes one data message (a binary frame and its
    /// continuations) may carry.
    public let maxMessageBytes: Int

    /// A header split across reads (at most 14 bytes).
    private var header: [UInt8] = []
    /// Payload bytes of the current frame still to come (after its header).
    private var remaining: UInt64 = 0
    private var inFrame = false
    private var opcode = WebSocketOpcode.binary
    private var fin = true
    private var mask: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
    private var maskOffset = 0
    /// A binary message was begun without FIN: continuations may follow.
    private var messageOpen = false
    private var messageBytes = 0
    /// The payload of the control frame being read.
    private var control: [UInt8] = []
    /// The peer sent Close (what follows is ignored).
    public private(set) var closeReceived = false
    /// The peer broke the RFC (what follows is ignored).
    public private(set) var failure: WebSocketError?

    public init(maxMessageBytes: Int = WebSocketFrameDecoder.defaultMaxMessageBytes) {
        self.maxMessageBytes = maxMessageBytes
    }

    /// A frame's header is incomplete, or a frame's payload is, or a
    /// fragmented message is unfinished.
    public var isMidMessage: Bool { inFrame || !header.isEmpty || messageOpen }

    /// Decodes `buffer` (bytes as read, continuing the stream of earlier
    /// calls): data payload is unmasked and moved to `buffer[0..<n]`, where
    /// `n` is returned; control frames are handed to `onControl` when whole.
    /// Throws on the first breach (the payload before it is lost with the
    /// connection); after a breach or a Close, returns 0.
    public mutating func decode(_ buffer: UnsafeMutableRawBufferPointer,
                                onControl: (WebSocketControlFrame) -> Void) throws(WebSocketError) -> Int {
        guard failure == nil, !closeReceived, let base = buffer.baseAddress else { return 0 }
        let count = buffer.count
        var read = 0
        var written = 0
        do throws(WebSocketError) {
            while read < count && !closeReceived {
                if !inFrame {
                    read += try takeHeader(UnsafeRawBufferPointer(rebasing: buffer[read...]))
                    if !inFrame { break }  // the header is split: the rest comes later
                    if remaining == 0 { try finishFrame(onControl) }
                    continue
                }
                let take = Int(min(remaining, UInt64(count - read)))
                if opcode.isControl {
                    for i in 0..<take { control.append(base.load(fromByteOffset: read + i, as: UInt8.self) ^ maskByte(maskOffset + i)) }
                } else {
                    for i in 0..<take {
                        let byte = base.load(fromByteOffset: read + i, as: UInt8.self) ^ maskByte(maskOffset + i)
                        base.storeBytes(of: byte, toByteOffset: written + i, as: UInt8.self)
                    }
                    written += take
                }
                read += take
                maskOffset = (maskOffset + take) & 3
                remaining -= UInt64(take)
                if remaining == 0 { try finishFrame(onControl) }
            }
        } catch {
            failure = error
            throw error
        }
        return written
    }

    @inline(__always)
    private func maskByte(_ offset: Int) -> UInt8 {
        switch offset & 3 {
        case 0: mask.0
        case 1: mask.1
        case 2: mask.2
        default: mask.3
        }
    }

    /// Takes header bytes from `bytes` (after any held from earlier calls);
    /// returns how many were taken. Sets `inFrame` once the header is whole.
    private mutating func takeHeader(_ bytes: UnsafeRawBufferPointer) throws(WebSocketError) -> Int {
        var taken = 0
        while taken < bytes.count {
            header.append(bytes[taken])
            taken += 1
            if header.count == 2 { try checkFirstBytes(header[0], header[1]) }
            if header.count >= 2 && header.count == Self.headerLength(header[1]) {
                try startFrame()
                header.removeAll(keepingCapacity: true)
                return taken
            }
        }
        return taken
    }

    /// 2, plus the extended length, plus the 4-byte mask.
    private static func headerLength(_ second: UInt8) -> Int {
        let short = second & 0x7F
        return 2 + (short == 126 ? 2 : short == 127 ? 8 : 0) + 4
    }

    /// Everything the first two bytes can tell, checked as soon as they are
    /// here (a hostile peer is failed without waiting for more).
    private func checkFirstBytes(_ first: UInt8, _ second: UInt8) throws(WebSocketError) {
        let op = WebSocketOpcode(rawValue: first)
        let isFin = first & 0x80 != 0
        if first & 0x70 != 0 { throw WebSocketError(.reservedBits, "RSV bits 0x\(String(first & 0x70, radix: 16)) set; no extension was negotiated") }
        if op.isReserved { throw WebSocketError(.reservedOpcode, "opcode \(op)") }
        if second & 0x80 == 0 { throw WebSocketError(.unmaskedFrame, "a client frame (\(op)) without the mask bit") }
        if op == .text { throw WebSocketError(.textFrame, "text frames are not part of checklists.v1; send binary") }
        if op.isControl {
            if !isFin { throw WebSocketError(.fragmentedControl, "a \(op) frame without FIN") }
            if second & 0x7F > 125 { throw WebSocketError(.oversizedControl, "a \(op) frame longer than 125 bytes") }
        } else if op == .continuation && !messageOpen {
            throw WebSocketError(.badContinuation, "a continuation frame with no message begun")
        } else if op == .binary && messageOpen {
            throw WebSocketError(.badContinuation, "a binary frame while a fragmented message is unfinished")
        }
    }

    /// The header is whole: reads its length and mask, checks the message bound.
    private mutating func startFrame() throws(WebSocketError) {
        opcode = WebSocketOpcode(rawValue: header[0])
        fin = header[0] & 0x80 != 0
        let short = header[1] & 0x7F
        var length = UInt64(short)
        var at = 2
        if short == 126 {
            length = UInt64(header[2]) << 8 | UInt64(header[3])
            at = 4
        } else if short == 127 {
            length = 0
            for i in 2..<10 { length = length << 8 | UInt64(header[i]) }
            if length >> 63 != 0 { throw WebSocketError(.badLength, "a 64-bit length with its top bit set") }
            at = 10
        }
        mask = (header[at], header[at + 1], header[at + 2], header[at + 3])
        maskOffset = 0
        remaining = length
        inFrame = true
        if !opcode.isControl {
            let total = UInt64(opcode == .continuation ? messageBytes : 0) + length
            if total > UInt64(maxMessageBytes) {
                throw WebSocketError(.messageTooBig, "a message of more than \(maxMessageBytes) bytes")
            }
            messageBytes = Int(total)
            messageOpen = !fin
            if fin { messageBytes = 0 }
        } else {
            control.removeAll(keepingCapacity: true)
        }
    }

    /// The current frame's payload is all here.
    private mutating func finishFrame(_ onControl: (WebSocketControlFrame) -> Void) throws(WebSocketError) {
        inFrame = false
        switch opcode {
        case .ping: onControl(.ping(control))
        case .pong: onControl(.pong(control))
        case .close:
            closeReceived = true
            onControl(try Self.parseClose(control))
        default: break
        }
    }

    /// A Close payload: empty, or a code a peer may send and a UTF-8 reason.
    public static func parseClose(_ payload: [UInt8]) throws(WebSocketError) -> WebSocketControlFrame {
        if payload.isEmpty { return .close(nil, reason: "") }
        guard payload.count >= 2 else { throw WebSocketError(.badCloseCode, "a Close payload of 1 byte") }
        let code = WebSocketCloseCode(rawValue: UInt16(payload[0]) << 8 | UInt16(payload[1]))
        guard code.isSendable else { throw WebSocketError(.badCloseCode, "close code \(code) may not be sent") }
        guard let reason = String(validating: payload[2...], as: UTF8.self) else {
            throw WebSocketError(.badCloseReason, "a close reason that is not UTF-8")
        }
        return .close(code, reason: reason)
    }
}
