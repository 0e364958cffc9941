import ChecklistWebSocket

/// WebSocket between the socket (or TLS) and the handler, after an HTTP
/// upgrade on a web port: client frames are unmasked in place in the input
/// buffer, so the handler sees the protocol's byte stream as on a TCP
/// port; every write is sent as one binary frame. Loop thread only, like
/// the rest of `SocketConnection`.
///
/// A client that breaks RFC 6455 is sent a Close with the RFC's code
/// (`WebSocketError.closeCode`), counted, and closed gracefully; a Close
/// from the client is answered with the same code. A silent client is
/// pinged, then closed (`WebSocketSettings.pingInterval`).
extension SocketConnection {
    /// Switches this connection (whose handler has just read an upgrade
    /// request and written the `101` answer) to WebSocket, and hands it to
    /// `handler`, which is told `connectionActive` now. Input already read
    /// past the request is decoded as frames once the current handler returns.
    package func upgradeToWebSocket(settings: WebSocketSettings, handler: any SocketConnectionHandler) {
        eventLoop.assertInEventLoop()
        guard isOpen, webSocket == nil else { return }
        webSocket = WebSocketTransport(settings: settings)
        context.counters.webSocket.count(.upgrade)
        inputLimit = limits.maxInputBytes
        self.handler = handler
        callHandler { $0.connectionActive(self) }
    }

    /// The connection speaks WebSocket (it was upgraded on a web port).
    public var isWebSocket: Bool { webSocket != nil }

    /// Counts a refused upgrade or a request of the web port's HTTP side.
    package func countWebRefusal(origin: Bool) {
        context.counters.webSocket.count(origin ? .originRefused : .handshakeRefused)
    }

    /// Decodes the last `count` bytes of the input buffer (just read or
    /// decrypted) in place, leaving their data payload there; answers
    /// control frames. False if the connection is no longer open.
    @discardableResult
    func decodeWebSocketInput(lastBytes count: Int) -> Bool {
        guard let ws = webSocket, count > 0 else { return true }
        var controls: [WebSocketControlFrame] = []
        var failure: WebSocketError?
        input.rewriteTail(count) { raw in
            do throws(WebSocketError) {
                return try ws.decoder.decode(raw) { controls.append($0) }
            } catch {
                failure = error
                return 0
            }
        }
        for control in controls {
            switch control {
            case .ping(let payload):
                appendWebSocketFrame(.pong, payload)
            case .pong:
                break  // any input counts as life (lastInput)
            case .close(let code, _):
                closeWebSocket(code ?? .normal)
                return false
            }
        }
        if let failure {
            context.counters.webSocket.count(WebSocketEvent(closedWith: failure.closeCode))
            closeWebSocket(failure.closeCode, reason: failure.reason.name)
            return false
        }
        return true
    }

    /// After the upgrade: decodes input that came with the request.
    func decodeWebSocketBacklog() {
        guard let ws = webSocket, ws.backlogUndecoded else { return }
        ws.backlogUndecoded = false
        if input.readableCount > 0, decodeWebSocketInput(lastBytes: input.readableCount) { deliverInput() }
    }

    /// Before `count` bytes of the handler's are appended to the output:
    /// appends their binary frame header. False if nothing may be sent (our Close went out).
    func appendWebSocketHeader(payloadLength count: Int, to buffer: inout [UInt8]) -> Bool {
        guard let ws = webSocket else { return true }
        guard !ws.closeSent else { return false }
        WebSocketFrameEncoder.appendHeader(opcode: .binary, payloadLength: count, to: &buffer)
        return true
    }

    /// Frames what `withOutputBuffer`'s body appended after `start`.
    func frameWebSocketOutput(_ buffer: inout [UInt8], from start: Int) {
        guard let ws = webSocket, buffer.count > start else { return }
        if ws.closeSent {
            buffer.removeSubrange(start...)
            return
        }
        var header: [UInt8] = []
        WebSocketFrameEncoder.appendHeader(opcode: .binary, payloadLength: buffer.count - start, to: &header)
        buffer.insert(contentsOf: header, at: start)
    }

    /// Appends a whole frame to the output (while open and before our Close).
    func appendWebSocketFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8]) {
        guard let ws = webSocket, !ws.closeSent, isOpen else { return }
        WebSocketFrameEncoder.appendHeader(opcode: opcode, payloadLength: payload.count, to: &output)
        output.append(contentsOf: payload)
        if opcode == .close { ws.closeSent = true }
        queueFlush()
    }

    /// Sends Close with `code` (once) and closes gracefully.
    func closeWebSocket(_ code: WebSocketCloseCode, reason: String = "") {
        appendWebSocketFrame(.close, WebSocketFrameEncoder.closePayload(code, reason: reason))
        close()
    }

    /// `close()` on a WebSocket: our Close frame goes first (1000).
    func webSocketWillClose() {
        appendWebSocketFrame(.close, WebSocketFrameEncoder.closePayload(.normal))
    }

    /// Tick: pings a silent client, closes one silent since the ping.
    func tickWebSocket(now: ContinuousClock.Instant) {
        guard let ws = webSocket, !ws.closeSent else { return }
        let interval = ws.settings.pingInterval
        if let sentAt = ws.pingSentAt {
            if lastInputAt >= sentAt {
                ws.pingSentAt = nil
            } else if now - sentAt >= interval {
                context.counters.webSocket.count(.pingTimeout)
                closeWebSocket(.goingAway, reason: "no answer to ping")
                return
            }
        }
        if ws.pingSentAt == nil && now - lastInputAt >= interval {
            ws.pingSentAt = now
            appendWebSocketFrame(.ping, Array("checklists".utf8))
        }
    }
}
