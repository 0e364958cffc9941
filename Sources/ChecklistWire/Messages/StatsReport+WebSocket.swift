import ChecklistModel

extension StatsReport {
    /// What a server with a web port saw (presence bit 4, Protocol/SPEC.md
    /// section 6.10; Protocol/WEBSOCKET.md): upgrades, refused upgrades, and
    /// WebSocket connections closed for breaking RFC 6455, by close code.
    public struct WebSocketStatus: Hashable, Sendable {
        /// Upgrades to WebSocket accepted since start.
        public var upgrades: UInt64 = 0
        /// Upgrade requests refused as malformed (HTTP 400, 405, 426).
        public var handshakesRefused: UInt64 = 0
        /// Upgrade requests refused for their Origin (HTTP 403).
        public var originsRefused: UInt64 = 0
        /// Connections closed with 1002 (protocol error).
        public var closedProtocolError: UInt64 = 0
        /// Connections closed with 1003 (a text frame).
        public var closedUnsupportedData: UInt64 = 0
        /// Connections closed with 1007 (a close reason that is not UTF-8).
        public var closedInvalidPayload: UInt64 = 0
        /// Connections closed with 1009 (a message over the limit).
        public var closedMessageTooBig: UInt64 = 0
        /// Connections closed with 1001 after an unanswered ping.
        public var pingTimeouts: UInt64 = 0

        public init() {}

        /// The fields in wire order.
        var fields: [UInt64] {
            [upgrades, handshakesRefused, originsRefused, closedProtocolError, closedUnsupportedData,
             closedInvalidPayload, closedMessageTooBig, pingTimeouts]
        }

        static func decode(from r: inout WireReader) throws(ChecklistError) -> WebSocketStatus {
            var s = WebSocketStatus()
            s.upgrades = try r.readVarint("webUpgrades")
            s.handshakesRefused = try r.readVarint("webHandshakesRefused")
            s.originsRefused = try r.readVarint("webOriginsRefused")
            s.closedProtocolError = try r.readVarint("webClosedProtocolError")
            s.closedUnsupportedData = try r.readVarint("webClosedUnsupportedData")
            s.closedInvalidPayload = try r.readVarint("webClosedInvalidPayload")
            s.closedMessageTooBig = try r.readVarint("webClosedMessageTooBig")
            s.pingTimeouts = try r.readVarint("webPingTimeouts")
            return s
        }
    }
}
