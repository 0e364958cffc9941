import Glibc
import CPostgres

/// One notification a `LISTEN`ing connection received.
public struct PostgresNotification: Hashable, Sendable {
    public var channel: String
    public var payload: String
    /// The backend that sent it (`pg_backend_pid()` of the notifier).
    public var senderPID: Int32
}

extension PostgresConnection {
    /// Subscribes this connection to the commit channel of the nodes
    /// (`Statements.commitChannel`). Constant SQL: the channel name is a
    /// constant of this module.
    public func listenForCommits() throws(PostgresError) {
        try executeScript("LISTEN checklist_commits")
    }

    /// Sends `payload` on the commit channel with `pg_notify`, in its own
    /// transaction that writes nothing: it has no transaction id and needs
    /// no WAL flush, so the notify queue's lock is held for microseconds,
    /// never through another transaction's commit (docs/POSTGRES.md, "Several
    /// nodes").
    public func notifyCommits(_ payload: String) throws(PostgresError) {
        try execute(Statements.notifyCommits, [.text(payload)])
    }

    /// Waits up to `timeoutMilliseconds` for the socket to be readable,
    /// reads what arrived and returns the notifications received (maybe
    /// none: a timeout, or other input).
    ///
    /// - Throws: `CONNECTION_LOST` when the connection broke.
    public func awaitNotifications(timeoutMilliseconds: Int32) throws(PostgresError) -> [PostgresNotification] {
        var received = takeNotifications()
        guard received.isEmpty else { return received }
        let socket = PQsocket(handle)
        guard socket >= 0 else { throw PostgresError(.connectionLost, "the connection has no socket") }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, timeoutMilliseconds)
        guard ready > 0 else { return [] }
        guard PQconsumeInput(handle) == 1 else {
            throw PostgresError(.connectionLost, String(cString: PQerrorMessage(handle)))
        }
        received = takeNotifications()
        if !isUsable { throw PostgresError(.connectionLost, "the connection broke while listening") }
        return received
    }

    private func takeNotifications() -> [PostgresNotification] {
        var received: [PostgresNotification] = []
        while let raw = PQnotifies(handle) {
            let notify = raw.pointee
            received.append(PostgresNotification(channel: String(cString: notify.relname),
                                                 payload: String(cString: notify.extra), senderPID: notify.be_pid))
            PQfreemem(raw)
        }
        return received
    }
}
