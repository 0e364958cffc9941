import ChecklistModel
import ChecklistWire

/// Every case, in the order of the table in Protocol/SPEC.md section 8:
/// the bad inputs first, then the happy path through every message.
public enum Catalogue {
    public static let all: [ConformanceCase] =
        framing + handshake + encoding + limits + store + transport + snapshots + access + happyPath + happySync

    /// The hostile and invalid inputs (the SPEC table).
    public static var badInputs: [ConformanceCase] { all.filter(\.isBadInput) }

    /// The case named `id`.
    public static func named(_ id: String) -> ConformanceCase? { all.first { $0.id == id } }

    /// The request id the cases give the frame under test.
    static let probe: UInt32 = 30
}
