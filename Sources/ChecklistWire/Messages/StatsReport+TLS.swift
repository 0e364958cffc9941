import ChecklistModel

extension StatsReport {
    /// What a server with a TLS port saw (presence bit 3, Protocol/SPEC.md
    /// section 6.10). Every figure but `handshakes` counts connections the
    /// server closed for it.
    public struct TLSStatus: Hashable, Sendable {
        /// TLS handshakes completed since start.
        public var handshakes: UInt64 = 0
        /// Connections to the TLS port whose first byte was not a TLS handshake record (plaintext).
        public var notTLS: UInt64 = 0
        /// Handshakes that failed: garbage records, no common version or
        /// cipher, a client certificate missing or not verifying, an alert from the client.
        public var handshakeFailures: UInt64 = 0
        /// Connections closed or reset by the client mid-handshake.
        public var handshakesTruncated: UInt64 = 0
        /// Handshakes not completed within the handshake timeout.
        public var handshakeTimeouts: UInt64 = 0
        /// Established TLS connections closed for a record that did not decrypt, or a fatal alert.
        public var recordErrors: UInt64 = 0
        /// Connections to a plaintext port whose first byte began a TLS handshake (0x16).
        public var tlsOnPlainPort: UInt64 = 0

        public init() {}

        /// The fields in wire order.
        var fields: [UInt64] {
            [handshakes, notTLS, handshakeFailures, handshakesTruncated, handshakeTimeouts, recordErrors, tlsOnPlainPort]
        }

        static func decode(from r: inout WireReader) throws(ChecklistError) -> TLSStatus {
            var s = TLSStatus()
            s.handshakes = try r.readVarint("tlsHandshakes")
            s.notTLS = try r.readVarint("tlsNotTLS")
            s.handshakeFailures = try r.readVarint("tlsHandshakeFailures")
            s.handshakesTruncated = try r.readVarint("tlsHandshakesTruncated")
            s.handshakeTimeouts = try r.readVarint("tlsHandshakeTimeouts")
            s.recordErrors = try r.readVarint("tlsRecordErrors")
            s.tlsOnPlainPort = try r.readVarint("tlsOnPlainPort")
            return s
        }
    }
}
