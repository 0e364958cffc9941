// checklist-postgres-bench: how fast a list loads from PostgreSQL into an
// empty Store, and the pgbench anchor figure of the same cluster.
//
//   checklist-postgres-bench [--items 1000000] [--loads 5] [--postgres CONNINFO]
//                            [--pgbench-seconds 10]
//
// Without --postgres it starts a private cluster (fsync on, as
// `PostgresCluster` makes it) and stops it at the end. --pgbench-seconds 0
// skips pgbench (which needs a cluster of its own making: it writes
// pgbench_* tables into a database it creates).
import ChecklistModel
import ChecklistPersistence
import ChecklistPostgres
import ChecklistStore
import ChecklistTesting
import Foundation

struct Options {
    var items: UInt64 = 1_000_000
    var loads = 5
    var conninfo: String?
    var pgbenchSeconds = 10

    init(_ arguments: ArraySlice<String>) {
        var rest = arguments
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { Self.usage("\(flag) needs a value") }
            switch flag {
            case "--items": items = UInt64(Self.count(value, flag))
            case "--loads": loads = Self.count(value, flag)
            case "--postgres": conninfo = value
            case "--pgbench-seconds": pgbenchSeconds = Self.count(value, flag)
            default: Self.usage("unknown option \(flag)")
            }
        }
    }

    static func count(_ value: String, _ flag: String) -> Int {
        guard let n = Int(value), n >= 0 else { usage("\(flag) takes a whole number") }
        return n
    }

    static func usage(_ problem: String) -> Never {
        FileHandle.standardError.write(Data("checklist-postgres-bench: \(problem)\nusage: checklist-postgres-bench [--items N] [--loads N] [--postgres CONNINFO] [--pgbench-seconds S]\n".utf8))
        exit(2)
    }
}

/// Feeds a checkpoint into a Store list by list, as the server's recovery does.
final class StoreSink: SnapshotRestoreSink {
    let store: Store
    private var restorer: ListRestorer?
    init(store: Store) { self.store = store }

    func restoreHeader(_ header: SnapshotHeader) throws { store.restoreNextListID(header.nextListID) }
    func restoreList(_ list: SnapshotList) throws {
        let summary = ListSummary(id: list.id, name: list.name, icon: list.icon, itemCount: 0, uncheckedCount: 0, revision: list.revision)
        restorer = try store.makeRestorer(for: ExportedList(namespace: list.namespace, summary: summary, nextItemID: list.nextItemID))
    }
    func restoreItem(_ item: Item, in list: ListID) throws {
        guard var current = restorer.take() else { throw PostgresError(.misuse, "an item before its list") }
        try current.append(item)
        restorer = consume current
    }
    func restoreEnd(_ trailer: SnapshotTrailer) throws {
        if let current = restorer.take() { try store.finishRestore(current) }
    }
}

func milliseconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
}

let options = Options(CommandLine.arguments.dropFirst())
guard options.items > 0, options.loads > 0 else { Options.usage("--items and --loads must be at least 1") }
let cluster = options.conninfo == nil ? try PostgresCluster() : nil
defer { cluster?.stop() }
let conninfo = try options.conninfo ?? cluster!.createDatabase("checklist_load_bench")
let store = try PostgresStore(conninfo: conninfo)

var start = ContinuousClock.now
let list = SnapshotList(namespace: .default, id: ListID(1), name: "Big", icon: "Inbox", revision: 1,
                        nextItemID: ItemID(options.items + 1), itemCount: options.items)
let checkpoint = try ListCheckpointBuilder(list: list)
for i in 1...options.items {
    try checkpoint.append(Item(id: ItemID(i), fields: ItemFields(text: "Item \(i): buy \(i &* 2_654_435_761 % 1_000_003) apples",
                                                                 checked: i % 3 == 0)))
}
try store.importLists { try $0.add(checkpoint) }
print("stored \(options.items) items in \(String(format: "%.0f", milliseconds(since: start))) ms")

var times: [Double] = []
var bytes = 0
for _ in 0..<options.loads {
    let target = Store()
    start = ContinuousClock.now
    let report = try store.loadList(ListID(1), into: StoreSink(store: target)) { try target.replay($0) }
    times.append(milliseconds(since: start))
    bytes = report?.checkpointBytes ?? 0
    guard try target.summary(in: .default, list: ListID(1)).itemCount == options.items else {
        fatalError("the loaded list does not hold \(options.items) items")
    }
}
times.sort()
print("load of \(options.items) items (\(bytes) compressed bytes) into an empty Store: min \(String(format: "%.0f", times[0])) ms, median \(String(format: "%.0f", times[times.count / 2])) ms over \(times.count) loads")

if let cluster, options.pgbenchSeconds > 0 {
    let database = "pgbench_anchor"
    _ = try cluster.createDatabase(database)
    let initialise = try cluster.runClient("pgbench", ["-i", "-q", "-s", "10", database])
    guard initialise.status == 0 else { fatalError("pgbench -i failed: \(initialise.stderr)") }
    let run = try cluster.runClient("pgbench", ["-N", "-c", "50", "-j", "2", "-T", String(options.pgbenchSeconds), database],
                                    timeout: .seconds(options.pgbenchSeconds + 120))
    let tps = run.stdout.split(separator: "\n").first { $0.hasPrefix("tps") } ?? "no tps line: \(run.stdout) \(run.stderr)"
    print("pgbench -N -c 50 -j 2 -T \(options.pgbenchSeconds) (scale 10, same cluster): \(tps)")
}
