/// Names one PATCH for exactly-once application (Protocol/SPEC.md section 9):
/// a client id the client chose at random once, and a sequence number it
/// increases for every patch it sends. A retry of the same patch carries the
/// same key, and the server answers it with the original result instead of
/// applying it again, while the key is within its bounded memory.
///
/// Keys are scoped to the namespace of the connection, so clients of
/// different namespaces never see each other's answers.
public struct IdempotencyKey: Hashable, Sendable, CustomStringConvertible {
    public var client: UInt64
    public var sequence: UInt64

    public init(client: UInt64, sequence: UInt64) {
        self.client = client
        self.sequence = sequence
    }

    public var description: String { "\(client)/\(sequence)" }
}
