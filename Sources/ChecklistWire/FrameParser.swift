import ChecklistModel

/// Finds frames in a stream of bytes without copying them. Stateless: the
/// caller keeps unconsumed bytes and calls again when more arrive.
public enum FrameParser {
    /// One step of parsing.
    public enum Result {
        /// Not a whole frame yet; read more (nothing is consumed).
        case needMore
        /// A whole frame: its header and where its body lies in the input.
        /// `consumed` is the frame's total size.
        case frame(FrameHeader, body: Range<Int>, consumed: Int)
        /// Framing is lost (`MALFORMED_FRAME` or `FRAME_TOO_LARGE`): answer
        /// the error with request id 0 and close the connection.
        case fatal(ChecklistError)
    }

    /// Looks at the start of `input`. The announced length is checked against
    /// `maxFrameBytes` as soon as its 4 bytes are in, before anything is
    /// allocated for the frame.
    public static func next(in input: UnsafeRawBufferPointer, maxFrameBytes: UInt32) -> Result {
        guard input.count >= 4 else { return .needMore }
        let length = input.u32BE(at: 0)
        if length < FrameHeader.minimumLength {
            return .fatal(ChecklistError(.malformedFrame, "frame length \(length) is smaller than the 6-byte header"))
        }
        if length > maxFrameBytes {
            return .fatal(ChecklistError(.frameTooLarge, "frame length \(length) exceeds maxFrameBytes \(maxFrameBytes)"))
        }
        let total = 4 + Int(length)
        guard input.count >= total else { return .needMore }
        let requestID = input.u32BE(at: 6)
        let header = FrameHeader(type: MessageType(rawValue: input[4]),
                                 flags: FrameFlags(rawValue: input[5]),
                                 requestID: requestID)
        return .frame(header, body: FrameHeader.size..<total, consumed: total)
    }
}
