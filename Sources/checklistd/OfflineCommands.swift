import ChecklistStorage
import ChecklistCommandLine
import ChecklistModel
import ChecklistPersistence
import ChecklistServer
import ChecklistSnapshot
import ChecklistStore
import Foundation

/// `checklistd export` and `checklistd import`: whole stores in and out of a
/// data directory while no server runs on it (the directory's lock is
/// taken, so a running server makes them fail with LOCKED).
///
/// Both recover the directory exactly as a server start does (newest
/// snapshot, then the log). `import` then applies the file through the
/// store's one commit path, appends its changes to the log, and writes a new
/// snapshot, so the next start sees the import without replaying it.
enum OfflineCommands {
    /// What `export` and `import` say in their help.
    private static let details = """
    With the server stopped: export writes every list of the data directory (of
    namespace NS only, with --namespace) to FILE as a snapshot (Protocol/SNAPSHOT.md;
    'gzip -t FILE' checks it). import loads the snapshot FILE into the data directory,
    all of it or nothing: each list keeps its namespace (all go to NS with --namespace)
    and its id when that id is free or is a list of the same namespace, which it then
    replaces; --replace also deletes every list the file does not hold (of NS only,
    with --namespace). The result is written as a new snapshot.
    With --postgres (or CHECKLIST_POSTGRES) instead of --data-dir, the data is read
    from and imported into PostgreSQL; an import is one transaction, and servers
    running on the database meanwhile do not see it until they restart.
    """

    private static let storeOptions: [OptionSpec] = [
        .value("--data-dir", "DIR", "the data directory (locked: the server must be stopped)"),
        .value("--postgres", "CONNINFO", "the PostgreSQL database instead (or CHECKLIST_POSTGRES)"),
        .value("--namespace", "NS", "only the lists of namespace NS"),
    ]

    static let export = CommandSpec(
        name: "export", summary: "write a stopped server's lists to a snapshot FILE",
        synopsis: ["checklistd export --data-dir DIR [--namespace NS] [--level 1-9] FILE",
                   "checklistd export --postgres CONNINFO [--namespace NS] [--level 1-9] FILE"],
        details: details, positionals: [Positional("FILE")],
        options: storeOptions + [.value("--level", "1-9", "gzip level of the snapshot (default 6)")])

    static let `import` = CommandSpec(
        name: "import", summary: "load a snapshot FILE into a stopped server's data",
        synopsis: ["checklistd import --data-dir DIR [--namespace NS] [--replace] FILE",
                   "checklistd import --postgres CONNINFO [--namespace NS] [--replace] FILE"],
        details: details, positionals: [Positional("FILE")],
        options: storeOptions + [.flag("--replace", "also delete every list the file does not hold")])

    struct Arguments {
        var dataDirectory: String?
        var postgres: String?
        var namespace: Namespace?
        var replace = false
        var level: Int32 = 6
        var file: String?
    }

    /// Runs the subcommand of `parsed`, if any, and returns its exit status
    /// (0 done, 1 failed, 2 bad usage, 3 PostgreSQL unreachable); nil for a server start.
    static func run(_ parsed: ParsedCommandLine) -> Int32? {
        guard let command = parsed.subcommand?.name else { return nil }
        let arguments: Arguments
        do throws(UsageError) {
            arguments = try Self.arguments(parsed)
        } catch {
            CommandLineTool.fail(error, program: "checklistd")
        }
        do {
            let line = command == "export" ? try export(arguments) : try importFile(arguments)
            print(line)
            return 0
        } catch {
            if let (status, message) = StorageChoice.unreachable(error) {
                fail(message)
                return status
            }
            fail("\(error)")
            return 1
        }
    }

    static func arguments(_ parsed: ParsedCommandLine) throws(UsageError) -> Arguments {
        var arguments = Arguments()
        arguments.dataDirectory = parsed.string("--data-dir")
        arguments.postgres = parsed.string("--postgres")
        arguments.namespace = parsed.string("--namespace").map { Namespace($0) }
        arguments.replace = parsed.flag("--replace")
        arguments.level = try parsed.integer("--level", Int32.self, min: 1, max: 9) ?? arguments.level
        arguments.file = parsed.positional(0)
        if arguments.postgres == nil, arguments.dataDirectory == nil,
           let conninfo = ProcessInfo.processInfo.environment["CHECKLIST_POSTGRES"], !conninfo.isEmpty {
            arguments.postgres = conninfo
        }
        guard (arguments.dataDirectory == nil) != (arguments.postgres == nil) else {
            throw parsed.error("\(parsed.command.name) needs one of --data-dir DIR and --postgres CONNINFO")
        }
        return arguments
    }

    /// Locks and recovers the data directory (or loads PostgreSQL) into a
    /// new store whose commits go there.
    private static func open(_ arguments: Arguments) throws -> (Store, any ServerStorage) {
        if let conninfo = arguments.postgres {
            return try StorageOpener.openStore { store, _ in try PostgresStorage(conninfo: conninfo, store: store) }
        }
        return try StorageOpener.openStore { store, _ in
            try DataDirectoryStorage(path: arguments.dataDirectory!, policy: .always, store: store) { error in
                fail("the write-ahead log failed: \(error)")
            }
        }
    }

    /// Waits until everything appended to `storage` committed; throws if it failed.
    private static func waitCommitted(_ storage: any ServerStorage) throws {
        let position = storage.lastPosition
        let settled = DispatchSemaphore(value: 0)
        storage.notify(waiter: 1, at: position) { settled.signal() }
        settled.wait()
        guard storage.commitState(of: position) == .durable else {
            throw PersistenceError(.io, "the import was not committed (see the event= lines); nothing was imported")
        }
    }

    private static func export(_ arguments: Arguments) throws -> String {
        let started = Date()
        let (store, storage) = try open(arguments)
        defer { try? storage.close() }
        let file = arguments.file!
        let (cut, _) = store.cut { () }
        var lists = 0
        var items: UInt64 = 0
        if let ns = arguments.namespace {
            for id in cut.listIDs(in: ns) {
                lists += 1
                items += cut.exportedList(id, in: ns)?.summary.itemCount ?? 0
            }
        } else {
            (lists, items) = (cut.counts.lists, UInt64(cut.counts.items))
        }
        let header = SnapshotHeader(createdAt: Int64(started.timeIntervalSince1970), source: "checklistd export",
                                    listCount: UInt64(lists), itemCount: items, startLSN: 0, nextListID: cut.nextListID)
        let temporary = file + ".partial"
        let summary: SnapshotWriter.Summary
        do {
            let writer = try SnapshotWriter(path: temporary, header: header, options: .init(level: arguments.level))
            try SnapshotExport.write(cut, namespace: arguments.namespace, to: writer)
            summary = try writer.finish(endLSN: 0)
            guard rename(temporary, file) == 0 else {
                throw SnapshotError(.io, "cannot rename \(temporary) to \(file): \(String(cString: strerror(errno)))")
            }
        } catch {
            unlink(temporary)
            throw error
        }
        let seconds = Date().timeIntervalSince(started)
        return "checklistd: exported \(summary.trailer.listCount) lists, \(summary.trailer.itemCount) items to \(file) "
            + "(\(summary.rawBytes) bytes raw, \(summary.compressedBytes) compressed) in \(String(format: "%.2f", seconds)) s"
    }

    private static func importFile(_ arguments: Arguments) throws -> String {
        let started = Date()
        let file = arguments.file!
        let (store, storage) = try open(arguments)
        defer { try? storage.close() }
        // An operator's file: no text limits, no bound on lists; the
        // decompression bounds hold, and the content must fit the one log
        // record the import becomes.
        var staging = store.makeImportStaging(enforcingLimits: false, maxLists: Int.max)
        let reader = try SnapshotReader(path: file, limits: SnapshotLimits(maxRawBytes: LogRecordFormat.maxImportRawBytes))
        while let record = try reader.next() {
            switch record {
            case .list(let l):
                try staging.beginList(ImportStaging.ListHeader(namespace: arguments.namespace ?? l.namespace, sourceID: l.id,
                                                               name: l.name, icon: l.icon, revision: l.revision,
                                                               nextItemID: l.nextItemID))
            case .item(let item):
                try staging.append(item)
            case .idempotency:
                break  // a server's memory of keys, not data to import
            }
        }
        let result = try store.importLists(staging, mode: arguments.replace ? .replace : .merge, namespace: arguments.namespace)
        var line = "checklistd: imported \(result.lists.count) lists, \(result.itemCount) items from \(file)"
        if arguments.replace { line += ", deleted \(result.deleted.count) lists" }
        if let directory = storage as? DataDirectoryStorage {
            try directory.log.waitDurable(directory.log.lastLSN)
            let snapshot = try directory.writeSnapshot(source: "checklistd import")
            line += "; new snapshot \(snapshot.file.path)"
        } else {
            try waitCommitted(storage)
            line += "; committed to PostgreSQL"
        }
        line += " in \(String(format: "%.2f", Date().timeIntervalSince(started))) s"
        for entry in result.lists where entry.id != entry.sourceID {
            line += "\nchecklistd: list \(entry.sourceID) of the file is list \(entry.id) now (its id was taken)"
        }
        return line
    }

    private static func fail(_ message: String) {
        FileHandle.standardError.write(Data("checklistd: \(message)\n".utf8))
    }
}
