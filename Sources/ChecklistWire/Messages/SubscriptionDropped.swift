import ChecklistModel

/// SUBSCRIPTION_DROPPED (0xE1), a push (request id 0): the server ended
/// every subscription of the connection. The connection stays open; the
/// client subscribes again from the last revisions it has (or uses
/// CHANGES_SINCE).
public struct SubscriptionDropped: WireMessage {
    public static let messageType = MessageType.subscriptionDropped

    /// Why. A struct with static constants: reasons added later decode as
    /// values, and clients treat an unknown one like `slowConsumer`.
    public struct Reason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// The client did not read its pushes fast enough: more than the
        /// server's push buffer was waiting for it.
        public static let slowConsumer = Reason(rawValue: 1)

        public var description: String {
            self == .slowConsumer ? "SLOW_CONSUMER" : "REASON_\(rawValue)"
        }
    }

    public var reason: Reason
    /// For humans; never parse it.
    public var message: String

    public init(reason: Reason, message: String) {
        self.reason = reason
        self.message = message
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> SubscriptionDropped {
        SubscriptionDropped(reason: Reason(rawValue: try r.readU8("reason")), message: try r.readString("message"))
    }

    public func encode(into w: inout WireWriter) {
        w.writeU8(reason.rawValue)
        w.writeString(message)
    }
}
