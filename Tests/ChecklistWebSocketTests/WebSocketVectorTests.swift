import ChecklistWebSocket
import Testing

/// The codec against Protocol/vectors/websocket (made by generate.py, independently).
@Suite struct WebSocketVectorTests {
    @Test func handshakes() throws {
        let cases = try WebSocketVectors.load("handshake.json", as: WebSocketVectors.Handshake.self)
        #expect(cases.count >= 10)
        for c in cases {
            let bytes = Array(c.request.utf8)
            let parsed = try bytes.withUnsafeBytes { try HTTPRequestHead.parse($0, maxBytes: 16384) }
            let (head, count) = try #require(parsed, "\(c.name)")
            #expect(count == bytes.count, "\(c.name)")
            do {
                let answer = try WebSocketHandshake.accept(head, origins: .init(allowed: c.allowedOrigins))
                #expect(c.status == 101, "\(c.name) was accepted")
                #expect(String(decoding: answer, as: UTF8.self) == c.response, "\(c.name)")
            } catch {
                #expect(error.status == c.status, "\(c.name): \(error)")
            }
        }
    }

    /// What decoding `reads` gives: the stream, the controls, the failure.
    static func decode(_ reads: [[UInt8]], maxMessageBytes: Int)
        -> (stream: [UInt8], controls: [WebSocketVectors.ClientFrames.Control], failure: WebSocketVectors.ClientFrames.Failure?) {
        var decoder = WebSocketFrameDecoder(maxMessageBytes: maxMessageBytes)
        var stream: [UInt8] = []
        var controls: [WebSocketVectors.ClientFrames.Control] = []
        var failure: WebSocketVectors.ClientFrames.Failure?
        for read in reads {
            var buffer = read
            let kept: Int = buffer.withUnsafeMutableBytes { raw in
                do throws(WebSocketError) {
                    return try decoder.decode(raw) { control in
                        switch control {
                        case .ping(let p): controls.append(.init(op: "ping", payload: p.hex))
                        case .pong(let p): controls.append(.init(op: "pong", payload: p.hex))
                        case .close(let code, let reason):
                            controls.append(.init(op: "close", code: code.map { Int($0.rawValue) }, reason: reason))
                        }
                    }
                } catch {
                    failure = .init(reason: error.reason.name, closeCode: Int(error.closeCode.rawValue))
                    return 0
                }
            }
            stream += buffer[..<kept]
        }
        return (stream, controls, failure)
    }

    @Test func clientFrames() throws {
        let cases = try WebSocketVectors.load("client-frames.json", as: WebSocketVectors.ClientFrames.self)
        #expect(cases.count >= 20)
        for c in cases {
            let reads = c.reads.map { [UInt8](hex: $0) }
            let whole = Self.decode(reads, maxMessageBytes: c.maxMessageBytes)
            #expect(whole.stream.hex == c.stream, "\(c.name)")
            #expect(whole.controls == c.controls, "\(c.name)")
            #expect(whole.failure == c.failure, "\(c.name)")
            // Split anywhere: the same outcome (a failure may lose the payload of the read it is in).
            let all = reads.flatMap { $0 }
            for cut in 0...all.count {
                let split = Self.decode([Array(all[..<cut]), Array(all[cut...])], maxMessageBytes: c.maxMessageBytes)
                #expect(split.controls == c.controls, "\(c.name) cut at \(cut)")
                #expect(split.failure == c.failure, "\(c.name) cut at \(cut)")
                if c.failure == nil { #expect(split.stream.hex == c.stream, "\(c.name) cut at \(cut)") }
            }
            let bytewise = Self.decode(all.map { [$0] }, maxMessageBytes: c.maxMessageBytes)
            if c.failure == nil { #expect(bytewise.stream.hex == c.stream, "\(c.name) byte by byte") }
            #expect(bytewise.failure == c.failure, "\(c.name) byte by byte")
        }
    }

    @Test func serverFrames() throws {
        let cases = try WebSocketVectors.load("server-frames.json", as: WebSocketVectors.ServerFrame.self)
        #expect(cases.count >= 6)
        for c in cases {
            let frame = WebSocketFrameEncoder.frame(WebSocketOpcode(rawValue: c.opcode), [UInt8](hex: c.payload))
            #expect(frame.hex == c.frame, "\(c.name)")
        }
    }
}
