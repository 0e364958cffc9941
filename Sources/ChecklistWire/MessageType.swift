/// The `type` byte of a frame (Protocol/SPEC.md section 5). A struct with
/// static constants so that unknown types received from a peer are values,
/// not decoding failures.
public struct MessageType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let hello = MessageType(rawValue: 0x01)
    public static let ping = MessageType(rawValue: 0x02)
    public static let auth = MessageType(rawValue: 0x03)
    public static let listLists = MessageType(rawValue: 0x10)
    public static let createList = MessageType(rawValue: 0x11)
    public static let updateList = MessageType(rawValue: 0x12)
    public static let deleteList = MessageType(rawValue: 0x13)
    public static let getPage = MessageType(rawValue: 0x20)
    public static let patch = MessageType(rawValue: 0x21)
    public static let subscribe = MessageType(rawValue: 0x30)
    public static let unsubscribe = MessageType(rawValue: 0x31)
    public static let changesSince = MessageType(rawValue: 0x32)
    public static let export = MessageType(rawValue: 0x40)
    public static let `import` = MessageType(rawValue: 0x41)
    public static let stats = MessageType(rawValue: 0x50)

    public static let helloOK = MessageType(rawValue: 0x81)
    public static let pong = MessageType(rawValue: 0x82)
    public static let lists = MessageType(rawValue: 0x90)
    public static let listCreated = MessageType(rawValue: 0x91)
    public static let listUpdated = MessageType(rawValue: 0x92)
    public static let listDeleted = MessageType(rawValue: 0x93)
    public static let page = MessageType(rawValue: 0xA0)
    public static let patchOK = MessageType(rawValue: 0xA1)
    public static let subscribed = MessageType(rawValue: 0xB0)
    public static let unsubscribed = MessageType(rawValue: 0xB1)
    public static let changes = MessageType(rawValue: 0xB2)
    public static let exportChunk = MessageType(rawValue: 0xC0)
    public static let importOK = MessageType(rawValue: 0xC1)
    public static let statsReport = MessageType(rawValue: 0xD0)

    public static let changePush = MessageType(rawValue: 0xE0)
    public static let subscriptionDropped = MessageType(rawValue: 0xE1)
    public static let error = MessageType(rawValue: 0xFF)

    /// The answer type of a request type: `t | 0x80`.
    public var responseType: MessageType { MessageType(rawValue: rawValue | 0x80) }

    /// True for types a client may send (0x01-0x5F).
    public var isRequestRange: Bool { rawValue >= 0x01 && rawValue <= 0x5F }

    public var description: String { "0x" + String(rawValue, radix: 16, uppercase: true) }
}
