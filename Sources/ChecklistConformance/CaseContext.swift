import ChecklistModel
import ChecklistFrames
import ChecklistWire

/// What a case's body works with: the target, the limits its server
/// announced, the fixture list, and connections.
public struct CaseContext: Sendable {
    public let target: Target
    /// The limits from HELLO_OK.
    public let limits: Limits
    public let fixture: Fixture
    /// The case being run (its `outcome` is what `expectOutcome` checks).
    public let outcome: Outcome

    /// A new connection, before HELLO.
    public func connect() throws -> FrameSocket {
        do {
            return try target.connect()
        } catch {
            throw CaseFailure("cannot connect to \(target.host):\(target.port): \(error)")
        }
    }

    /// A new connection past HELLO, with the target's token.
    public func connectReady() throws -> FrameSocket {
        let connection = try connect()
        try connection.handshake(token: target.token)
        return connection
    }

    /// Checks that `connection` answers request `id` (0 for a
    /// connection-level error) as the case's outcome says, and then that
    /// the connection stays usable or is closed, as it says.
    public func expectOutcome(on connection: FrameSocket, requestID id: UInt32) throws {
        if let code = outcome.error {
            try connection.expectError(outcome.connectionLevel ? 0 : id, code, field: outcome.field)
        }
        try expectConnectionState(connection)
    }

    /// Checks only the connection part of the outcome.
    public func expectConnectionState(_ connection: FrameSocket) throws {
        switch outcome.connection {
        case .survives: try connection.expectAlive()
        case .closed: try connection.expectClosed()
        case .abandoned: connection.reset()
        }
    }

    /// A list id no server has handed out (ids are assigned from 1 upwards).
    public var missingList: ListID { ListID(1 << 62) }
    /// An item id no list holds.
    public var missingItem: ItemID { ItemID(1 << 40) }
}
