import ChecklistWebSocket

// libFuzzer target: the web port's codec, as the server runs it on what a
// client sends. The input's first byte picks a read size (1 to 256 bytes);
// the rest is fed to the WebSocket frame decoder in reads of that size and,
// separately, in one read: both must end alike (the same control frames, the
// same failure, and with no failure the same payload), and no read may keep
// more bytes than it was given. The same bytes are also parsed as an HTTP
// request head and, when one parses, checked as an upgrade request.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocket(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let readSize = Int(data[0]) + 1
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let whole = decode(bytes, readSize: max(1, bytes.count))
    let split = decode(bytes, readSize: readSize)
    precondition(whole.controls == split.controls, "controls differ when read \(readSize) bytes at a time")
    precondition(whole.failure == split.failure, "failures differ when read \(readSize) bytes at a time")
    if whole.failure == nil { precondition(whole.payload == split.payload, "payload differs") }
    let result = bytes.withUnsafeBytes { raw in
        Result { () throws(HTTPRequestHead.ParseError) in try HTTPRequestHead.parse(raw, maxBytes: 16384) }
    }
    if case .success(let parsed?) = result {
        precondition(parsed.count <= bytes.count, "a head longer than the input")
        _ = try? WebSocketHandshake.accept(parsed.head, origins: .init(allowed: ["https://a.example"]))
    }
    return 0
}

func decode(_ bytes: [UInt8], readSize: Int) -> (payload: [UInt8], controls: [WebSocketControlFrame], failure: String?) {
    var decoder = WebSocketFrameDecoder(maxMessageBytes: 4096)
    var payload: [UInt8] = []
    var controls: [WebSocketControlFrame] = []
    var failure: String?
    var at = 0
    while at < bytes.count && failure == nil {
        var chunk = Array(bytes[at..<min(at + readSize, bytes.count)])
        at += chunk.count
        let kept: Int = chunk.withUnsafeMutableBytes { raw in
            do throws(WebSocketError) {
                return try decoder.decode(raw) { controls.append($0) }
            } catch {
                failure = "\(error.reason) \(error.closeCode)"
                return 0
            }
        }
        precondition(kept >= 0 && kept <= chunk.count, "kept \(kept) of \(chunk.count)")
        payload += chunk[..<kept]
    }
    return (payload, controls, failure)
}
