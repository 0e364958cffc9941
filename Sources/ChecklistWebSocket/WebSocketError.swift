/// Why a WebSocket peer is failed: what it broke, and the close code the
/// server closes with (Protocol/WEBSOCKET.md, "Hostile peers").
public struct WebSocketError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong. A struct with static constants, so that new reasons
    /// never break a `switch`.
    public struct Reason: Hashable, Sendable, CustomStringConvertible {
        /// The name used in log lines, e.g. `unmasked_frame`.
        public let name: String
        /// The close code this reason is answered with.
        public let closeCode: WebSocketCloseCode
        private init(_ name: String, _ closeCode: WebSocketCloseCode) {
            self.name = name
            self.closeCode = closeCode
        }

        /// A client frame without the mask bit.
        public static let unmaskedFrame = Reason("unmasked_frame", .protocolError)
        /// RSV1, RSV2 or RSV3 set (no extension is ever negotiated).
        public static let reservedBits = Reason("reserved_bits", .protocolError)
        /// Opcode 0x3-0x7 or 0xB-0xF.
        public static let reservedOpcode = Reason("reserved_opcode", .protocolError)
        /// A close, ping or pong frame without FIN.
        public static let fragmentedControl = Reason("fragmented_control", .protocolError)
        /// A control frame with more than 125 payload bytes.
        public static let oversizedControl = Reason("oversized_control", .protocolError)
        /// A continuation frame with no message begun, or a new data frame
        /// while one is unfinished.
        public static let badContinuation = Reason("bad_continuation", .protocolError)
        /// A 64-bit payload length with its top bit set.
        public static let badLength = Reason("bad_length", .protocolError)
        /// A Close frame with a 1-byte payload or a code no peer may send.
        public static let badCloseCode = Reason("bad_close_code", .protocolError)
        /// A Close frame whose reason is not UTF-8.
        public static let badCloseReason = Reason("bad_close_reason", .invalidPayload)
        /// A text frame: the checklists subprotocol is binary only.
        public static let textFrame = Reason("text_frame", .unsupportedData)
        /// A message longer than `WebSocketFrameDecoder.maxMessageBytes`.
        public static let messageTooBig = Reason("message_too_big", .messageTooBig)

        public var description: String { name }
    }

    public let reason: Reason
    /// For humans; never parse it.
    public let message: String

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var closeCode: WebSocketCloseCode { reason.closeCode }
    public var description: String { "\(reason) (close \(closeCode)): \(message)" }
}
