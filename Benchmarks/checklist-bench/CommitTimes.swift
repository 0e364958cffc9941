import ChecklistModel
import ChecklistPostgres
import Glibc

/// When PostgreSQL committed each change of some lists: the commit
/// timestamp it records per transaction (`pg_xact_commit_timestamp` of the
/// `changes` row's `xmin`), in nanoseconds of the system clock
/// (`CLOCK_REALTIME`, the clock PostgreSQL stamps with). Only a database
/// with `track_commit_timestamp = on` records them. PostgreSQL takes the
/// stamp as it writes the commit record, before the record's WAL flush.
struct CommitTimes {
    private var times: [ListID: [Revision: UInt64]] = [:]

    /// Why commit times cannot be read from `conninfo`.
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// Reads the commit time of every stored change of `lists`.
    ///
    /// - Throws: `Unavailable` when the database does not record commit
    ///   timestamps or cannot be read.
    static func read(conninfo: String, lists: [ListID]) throws(Unavailable) -> CommitTimes {
        do {
            let connection = try PostgresConnection(conninfo: conninfo)
            let setting = try connection.execute("SELECT current_setting('track_commit_timestamp')")
            guard try setting.string(0, 0) == "on" else { throw Unavailable(description: "track_commit_timestamp is off") }
            var read = CommitTimes()
            for list in lists {
                let rows = try connection.execute("""
                    SELECT revision, (extract(epoch FROM pg_xact_commit_timestamp(xmin)) * 1000000)::int8
                    FROM changes WHERE list_id = $1
                    """, [.int64(Int64(list.rawValue))])
                for row in 0..<rows.rowCount where !rows.isNull(row, 1) {
                    read.times[list, default: [:]][try rows.uint64(row, 0)] = try rows.uint64(row, 1) * 1000
                }
            }
            return read
        } catch let error as Unavailable {
            throw error
        } catch {
            throw Unavailable(description: "\(error)")
        }
    }

    /// The commit time of `list` at `revision`, if stored.
    func time(_ list: ListID, _ revision: Revision) -> UInt64? { times[list]?[revision] }

    /// Now, in the clock commit times are given in.
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
