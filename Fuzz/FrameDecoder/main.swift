import ChecklistModel
import ChecklistWire

// libFuzzer target: the frame parser and the message decoders, exactly as
// the server (requests) and the client (server messages) run them.
//
// The input is a byte stream. Its first byte picks the receiver's
// `maxFrameBytes` (small limits reach FRAME_TOO_LARGE and the zlib bound
// quickly); the rest is parsed frame after frame like a connection's input.
// Every frame that decodes must survive a round trip: encoding the decoded
// value and decoding that again gives the same value (a codec that reads
// what it cannot write, or writes what it cannot read, traps here).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let limits: [UInt32] = [64, 1024, 65536, 4 << 20]
    let maxFrameBytes = limits[Int(data[0]) % limits.count]
    let stream = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    var offset = 0
    while offset < stream.count {
        let rest = UnsafeRawBufferPointer(rebasing: stream[offset...])
        switch FrameParser.next(in: rest, maxFrameBytes: maxFrameBytes) {
        case .needMore:
            return 0
        case .fatal(let error):
            precondition(error.code == .malformedFrame || error.code == .frameTooLarge, "fatal \(error)")
            return 0
        case let .frame(header, body, consumed):
            precondition(consumed >= FrameHeader.size && consumed <= rest.count, "consumed \(consumed) of \(rest.count)")
            let bodyBytes = UnsafeRawBufferPointer(rebasing: rest[body])
            if let request = try? Request.decode(header: header, body: bodyBytes, maxFrameBytes: maxFrameBytes) {
                var w = WireWriter()
                var encoder = FrameEncoder(compress: header.flags.contains(.compressed))
                request.encode(requestID: header.requestID, into: &w, encoder: &encoder)
                precondition(roundTrip(w.bytes) { (h, b) throws(ChecklistError) in try Request.decode(header: h, body: b, maxFrameBytes: .max) } == request,
                             "request round trip differs: \(request)")
            }
            if let message = try? ServerMessage.decode(header: header, body: bodyBytes, maxFrameBytes: maxFrameBytes) {
                var w = WireWriter()
                var encoder = FrameEncoder(compress: header.flags.contains(.compressed))
                message.encode(requestID: header.requestID, into: &w, encoder: &encoder)
                precondition(roundTrip(w.bytes) { (h, b) throws(ChecklistError) in try ServerMessage.decode(header: h, body: b, maxFrameBytes: .max) } == message,
                             "server message round trip differs: \(message)")
            }
            offset += consumed
        }
    }
    return 0
}

/// Parses the one frame in `bytes` and decodes it with `decode`.
func roundTrip<T>(_ bytes: [UInt8], _ decode: (FrameHeader, UnsafeRawBufferPointer) throws(ChecklistError) -> T) -> T? {
    bytes.withUnsafeBytes { raw -> T? in
        guard case let .frame(header, body, consumed) = FrameParser.next(in: raw, maxFrameBytes: .max),
              consumed == raw.count else { return nil }
        return try? decode(header, UnsafeRawBufferPointer(rebasing: raw[body]))
    }
}
