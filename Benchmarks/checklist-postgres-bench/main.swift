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
import ChecklistStorage
import ChecklistCommandLine
import ChecklistModel
import ChecklistPersistence
import ChecklistSnapshot
import ChecklistPostgres
import ChecklistServer
import ChecklistStore
import ChecklistTesting
import Foundation

/// Counts what a load hands over, without building a list: the cost of the
/// fetch and the snapshot decode alone.
final class CountingSink: SnapshotRestoreSink {
    var items = 0
    func restoreHeader(_ header: SnapshotHeader) throws {}
    func restoreList(_ list: SnapshotList) throws {}
    func restoreItem(_ item: Item, in list: ListID) throws { items += 1 }
}

/// CPU seconds this process used so far (user + system, all threads).
func cpuMilliseconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000
}

/// Runs `body` `count` times; returns the sorted wall times and the median CPU time.
func measure(_ count: Int, _ body: () throws -> Void) rethrows -> (wall: [Double], cpu: Double) {
    var wall: [Double] = []
    var cpu: [Double] = []
    for _ in 0..<count {
        let start = ContinuousClock.now
        let cpuStart = cpuMilliseconds()
        try body()
        wall.append(milliseconds(since: start))
        cpu.append(cpuMilliseconds() - cpuStart)
    }
    return (wall.sorted(), cpu.sorted()[cpu.count / 2])
}

func report(_ what: String, _ figures: (wall: [Double], cpu: Double)) {
    let f = { String(format: "%.0f", $0) }
    print("\(what): wall min \(f(figures.wall[0])) ms, median \(f(figures.wall[figures.wall.count / 2])) ms, CPU median \(f(figures.cpu)) ms (\(figures.wall.count) runs)")
}

func milliseconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
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
let parts = try store.connection.execute("SELECT count(*), sum(length(data))::bigint FROM list_checkpoints WHERE list_id = 1")
print("stored \(options.items) items in \(String(format: "%.0f", milliseconds(since: start))) ms: \(try parts.int64(0, 0)) parts, \(try parts.int64(0, 1)) compressed bytes")

report("fetch of the checkpoint parts only", try measure(options.loads) {
    _ = try store.connection.execute("SELECT data FROM list_checkpoints WHERE list_id = 1 ORDER BY part")
})
report("load into a counting sink (fetch + snapshot decode)", try measure(options.loads) {
    let sink = CountingSink()
    _ = try store.loadList(ListID(1), into: sink) { _ in }
    guard sink.items == Int(options.items) else { fatalError("the load handed over \(sink.items) items") }
})
// One stream on this thread, then as checklistd's loaders read it: the
// gzip members inflated on other threads while this one decodes.
for threads in Set([1, SnapshotReader.defaultInflateThreads]).sorted() {
    report("load of \(options.items) items into an empty Store, inflated on \(threads) thread(s)", try measure(options.loads) {
        let target = Store()
        _ = try store.loadList(ListID(1), into: StoreRestoreSink(store: target), inflateThreads: threads) { try target.replay($0) }
        guard try target.summary(in: .default, list: ListID(1)).itemCount == options.items else {
            fatalError("the loaded list does not hold \(options.items) items")
        }
    })
}

if let cluster, options.pgbenchSeconds > 0 {
    let database = "pgbench_anchor"
    try cluster.pgbenchInitialise(database: database)
    let tps = try cluster.pgbenchTPS(database: database, clients: 50, seconds: options.pgbenchSeconds)
    print("pgbench -N -c 50 -j 2 -T \(options.pgbenchSeconds) (scale 10, same cluster): tps = \(String(format: "%.1f", tps))")
}
