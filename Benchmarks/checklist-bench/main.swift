import ChecklistSnapshot
import Foundation

let usage = """
usage: checklist-bench SCENARIO [options] [--json]

scenarios:
  codec     encode/decode PAGE frames in memory   [--rows 100] [--text-bytes 40] [--iterations 20000]
  pages     page-fetch throughput and latency     [--items 1000000] [--connections 50] [--page 100]
            [--pattern sequential|random|deep|head] [--seconds 10] [--filter all|checked|unchecked]
            [--decode rows|items] [--compression on|off] [--executor reader|pool]; tool CPU per page
  scroll    a table view scrolling a huge list    [--items 1000000] [--viewport 20] [--fps 120]
            [--rows-per-second 10000] [--seconds 10] [--mode scroll|scrub] [--page 100] [--prefetch-pages 4]
  load      many connections, a mix of requests   [--connections 50] [--seconds 10] [--rate R]
            [--mix page=70,patch=20,lists=10] [--pipeline 1] [--lists 10] [--items 1000]
            [--page 50] [--threads N] [--seed 1] [--compression off|on] [--offset random|N]
            [--text-bytes 0] [--writes random|by-node]; every answer checked; loopback only;
            --writes by-node with --nodes N: a connection on node k PATCHes only the
            load lists whose index is k mod N (reads stay random)
  websocket GET_PAGE over TCP and over the web port's WebSocket, thin clients both sides
            [--items 100000] [--connections 50] [--page 100] [--seconds 5] [--pipeline 1];
            pages/s of each and their ratio
  snapshot  IMPORT then EXPORT of N items       [--items 1000000] [--lists N/100000] [--text-bytes 40]
            [--chunk 1048576] [--window 4] [--server-threads N] [--import-inflate-threads N] [--probe lists|ping]
            [--probe-ms 5]; MB/s of raw records, ratio, server peak RSS, latency of
            another connection meanwhile
  restart   start-up time on a big store          [--items 10000000] [--lists N/100000] [--text-bytes 40]
            [--runs 1]; spawn to "listening on" line, resident bytes per item after
  memory    bytes per item, over the wire and after a restart, beside Redis
            [--items 1000000] [--text-bytes 40] [--redis auto|off] [--retain-bytes N]
  fanout    W writers, S subscribers of every change [--subscribers 100] [--writers 4] [--lists 1]
            [--seconds 10]; push latency writer's send→subscriber p50/p99 (and, on
            --postgres with track_commit_timestamp on, commit→subscriber), pushes/s
  failover  two nodes of its own on one database (--postgres CONNINFO, else a
            private cluster), --clients 4 on each; node 1
            killed (SIGKILL) after --seconds 3, run on for --after 3: acknowledged
            patches lost, dead node's clients' gap until they work again
  cache     a PostgreSQL node's cache of lists; needs --postgres CONNINFO [--items 1000000]
            [--cache-bytes 67108864] [--factor 10] [--lists 40] [--page 1000]; GET_PAGE to PAGE
            of a list loaded into an empty cache, and peak RSS paging lists totalling
            factor x the cache

Scenarios that need a server start their own checklistd (the one built next
to this binary) on 127.0.0.1 port 0 with a temporary data directory (on
PostgreSQL with --postgres CONNINFO: pages, scroll, load, fanout, cache), unless
--server HOST:PORT[,HOST:PORT...] names running ones (nodes of one
service, tried in turn). With --postgres, load and fanout take --nodes N: N
nodes on that one database (load spreads its connections over them; fanout
writes through the first and subscribes on the last). Items get --text-bytes bytes of
text (default 40).

TLS (every scenario but codec):
  --tls                   every connection speaks TLS; with no --server, the
                          bench's own checklistd gets throwaway certificates
                          (made with the openssl command in its temp dir)
  --tls-ca FILE           with --server: the CA to trust (default: the system's)
  --tls-server-name NAME  with --server: the name the certificate must carry
  --tls-cert FILE --tls-key FILE
                          with --server: a client certificate (mutual TLS)

Each scenario prints a table, or one JSON object with --json
(keys in Benchmarks/README.md), including toolCpuUsPerRequest: this
tool's own CPU time per request, to tell when the tool is the limit.
"""

var arguments = CommandLine.arguments.dropFirst()
guard let scenario = arguments.popFirst(), !["-h", "--help", "help"].contains(scenario) else {
    print(usage)
    exit(CommandLine.arguments.count > 1 ? 0 : 2)
}
do {
    switch scenario {
    case "codec":
        try CodecScenario.run(try BenchArguments(arguments, flagNames: ["json", "tls"]))
    case "pages":
        try await PagesScenario.run(try BenchArguments(arguments, flagNames: ["json", "tls"]))
    case "scroll":
        try await ScrollScenario.run(try BenchArguments(arguments, flagNames: ["json", "tls"]))
    case "restart":
        try RestartScenario.run(try BenchArguments(arguments, flagNames: ["json", "tls"]))
    case "memory":
        try await MemoryScenario.run(try BenchArguments(arguments, flagNames: ["json", "tls"]))
    case "cache":
        try await CacheScenario.run(try BenchArguments(arguments, flagNames: ["json"]))
    case "fanout":
        try await FanoutScenario.run(try BenchArguments(arguments, flagNames: ["json", "tls"]))
    case "load":
        try await LoadScenario.run(try BenchArguments(arguments, flagNames: ["json", "tls"]))
    case "failover":
        try await FailoverScenario.run(try BenchArguments(arguments, flagNames: ["json"]))
    case "snapshot":
        try await SnapshotScenario.run(try BenchArguments(arguments, flagNames: ["json", "tls"]))
    case "websocket":
        try await WebSocketScenario.run(try BenchArguments(arguments, flagNames: ["json"]))
    default:
        throw BenchArguments.UsageError(description: "unknown scenario '\(scenario)'")
    }
} catch is BenchArguments.HelpRequested {
    print(usage)
} catch let error as BenchArguments.UsageError {
    FileHandle.standardError.write(Data("checklist-bench: \(error)\n\n\(usage)\n".utf8))
    exit(2)
} catch {
    FileHandle.standardError.write(Data("checklist-bench: \(error)\n".utf8))
    exit(1)
}
