import ChecklistModel

/// Everything `checklistd` can be told on its command line.
public struct ServerConfiguration: Sendable {
    /// Address to bind. Loopback by default.
    public var host: String = "127.0.0.1"
    /// Port to bind; 0 picks an ephemeral port.
    public var port: UInt16 = 7420
    /// Directory holding the server's data.
    public var dataDirectory: String = "./data"
    /// Event-loop threads; 0 means one per core.
    public var threads: Int = 0
    /// Limits announced in HELLO_OK and enforced.
    public var limits: Limits = .default
    /// Most connections open at once; more are refused.
    public var maxConnections: Int = 10_000
    /// Pending output per connection past which reading from it pauses.
    public var outputHighWaterBytes: Int = 1 << 20
    /// Pending output per connection past which it is closed (a client that
    /// stopped reading).
    public var maxOutputBytes: Int = 64 << 20
    /// Name sent in HELLO_OK.
    public var serverName: String = "checklistd/1.0"

    public init() {}
}
