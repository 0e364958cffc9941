import ChecklistWebSocket
import ChecklistWire
import Testing

@Suite struct WebSocketCodecTests {
    @Test func acceptKeyOfRFCExample() {
        #expect(WebSocketAcceptKey.accept(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test(arguments: [0, 1, 2, 3, 4, 16, 20])
    func base64RoundTrip(count: Int) {
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 * 37 + 5) }
        #expect(Base64.decode(Base64.encode(bytes)) == bytes)
    }

    @Test func base64RefusesGarbage() {
        #expect(Base64.decode("abc") == nil)
        #expect(Base64.decode("a!c=") == nil)
    }

    /// A 64-bit length both ways, payload streamed through reads of 4 KiB.
    @Test func largeMessageStreams() throws {
        let payload = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let mask: [UInt8] = [1, 2, 3, 4]
        let frame = WebSocketFrameEncoder.frame(.binary, payload, mask: mask)
        #expect(frame[1] == 0x80 | 127)
        #expect(frame.count == 14 + payload.count)
        var decoder = WebSocketFrameDecoder()
        var stream: [UInt8] = []
        var at = 0
        while at < frame.count {
            var chunk = Array(frame[at..<min(at + 4096, frame.count)])
            at += chunk.count
            let kept = try chunk.withUnsafeMutableBytes { raw throws(WebSocketError) in try decoder.decode(raw) { _ in } }
            stream += chunk[..<kept]
        }
        #expect(stream == payload)
        #expect(!decoder.isMidMessage)
        let serverFrame = WebSocketFrameEncoder.frame(.binary, payload)
        #expect(Array(serverFrame[..<10]) == [0x82, 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70])
    }

    @Test func sixtyFourBitLengthWithTopBitFails() {
        var bytes: [UInt8] = [0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0]
        #expect(throws: WebSocketError.self) {
            _ = try bytes.withUnsafeMutableBytes { raw throws(WebSocketError) in
                var decoder = WebSocketFrameDecoder()
                return try decoder.decode(raw) { _ in }
            }
        }
    }

    @Test func requestHeadLimitsAndErrors() throws {
        func parse(_ text: String, max: Int = 16384) throws(HTTPRequestHead.ParseError) -> (head: HTTPRequestHead, count: Int)? {
            let bytes = Array(text.utf8)
            let result = bytes.withUnsafeBytes { raw in
                Result { () throws(HTTPRequestHead.ParseError) in try HTTPRequestHead.parse(raw, maxBytes: max) }
            }
            return try result.get()
        }
        #expect(try parse("GET / HTTP/1.1\r\nHost: x\r\n") == nil)  // incomplete
        let (head, count) = try #require(try parse("GET /js/a.js?v=1 HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nx-a: 2\r\n\r\nrest"))
        #expect(count == 54)
        #expect(head.path == "/js/a.js")
        #expect(head.field("x-a") == "1, 2")
        #expect(head.keepsAlive)
        #expect(throws: HTTPRequestHead.ParseError.self) { try parse(String(repeating: "a", count: 200), max: 100) }
        do {
            _ = try parse("GET / HTTP/2.0\r\n\r\n")
            Issue.record("HTTP/2.0 parsed")
        } catch { #expect(error.status == 505) }
        do {
            _ = try parse("GET / HTTP/1.1\r\nbad line\r\n\r\n")
            Issue.record("a header line without a colon parsed")
        } catch { #expect(error.status == 400) }
        let old = try #require(try parse("GET / HTTP/1.0\r\n\r\n"))
        #expect(!old.head.keepsAlive)
    }
}
