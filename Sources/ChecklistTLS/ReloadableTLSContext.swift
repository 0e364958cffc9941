import Synchronization

/// A server's TLS context that can be rebuilt from its files while the
/// server runs (on SIGHUP): new sessions take `current`, sessions already
/// made keep the context they were made from.
public final class ReloadableTLSContext: Sendable {
    /// The files the context is built from.
    public let configuration: TLSServerConfiguration
    private let latest: Mutex<TLSContext>

    /// Builds the first context.
    ///
    /// - Throws: `TLSError` `.configuration` if the files do not load.
    public init(_ configuration: TLSServerConfiguration) throws(TLSError) {
        self.configuration = configuration
        latest = Mutex(try TLSContext(server: configuration))
    }

    /// The context new sessions are made from.
    public var current: TLSContext {
        latest.withLock { $0 }
    }

    /// Reads the files again and, if they load, makes the new context
    /// `current`. If they do not, `current` stays what it was.
    ///
    /// - Throws: `TLSError` `.configuration` saying which file failed and why.
    public func reload() throws(TLSError) {
        let fresh = try TLSContext(server: configuration)
        latest.withLock { $0 = fresh }
    }
}
