// swift-tools-version:6.0
import PackageDescription

// Layers, bottom to top (no module imports one above it):
//   CZlib, CLibdeflate, CLinux, CPostgres, COpenSSL   C libraries (zlib, libdeflate, libpq, OpenSSL 3) and the Linux shim (epoll, eventfd, accept4, malloc_trim)
//   ChecklistRandom          a seeded RNG (SplitMix64) for tests, bench and fuzzers; no dependencies
//   ChecklistLatency         the latency histogram of the server's metrics and the bench; no dependencies
//   ChecklistModel           value types of the domain; no I/O
//   ChecklistThreads         one thread helper, one lock with deadline waits, a count-down latch
//   ChecklistWire            protocol v1 codec: frames, messages, compression (frame bodies deflated by its own
//                            fixed-Huffman FrameDeflater, inflated by libdeflate on Linux, zlib elsewhere); no I/O
//   ChecklistStore           namespaces, lists, the one apply path; no sockets
//   ChecklistLog             the server's structured, rate-limited log lines; no dependencies
//   ChecklistSnapshot        the snapshot file format: reader, writer, gzip, CRC32, SnapshotError; the change record codec
//   ChecklistPersistence     the server's write-ahead log, data directory and recovery; PersistenceError (wraps a
//                            snapshot of the directory's SnapshotError)
//   ChecklistPostgres        PostgreSQL store over libpq: schema, commits, checkpoints, change feed
//   ChecklistStorage         the server's storage (data directory or PostgreSQL) behind one seam: committer,
//                            follower, list cache and loaders, upkeep, durability waiters; knows no sockets
//                            and no event loop
//   ChecklistSocket          thin POSIX socket helpers shared by server and client
//   ChecklistIO              the readiness layer under every loop (server, client, bench): epoll on Linux, poll(2) anywhere
//   ChecklistTLS             TLS contexts and sessions over memory buffers (OpenSSL), and TLSSocketStream, the one
//                            path between a session and a socket under every TLS client
//   ChecklistJWT             signed tokens (JWT): JOSE header, claims, JWK Sets, OpenSSL verification; no I/O but reading the key file
//   ChecklistWebSocket       RFC 6455 codec: the HTTP request head, the upgrade handshake, frames; no I/O
//   ChecklistEventLoop       event loops over ChecklistIO, connections (plaintext, TLS, WebSocket), timers, signals, TCP server; knows no protocol
//   ChecklistServer          protocol sessions, live sync, access control, metrics, transfers; the web port (the page, /ws)
//   ChecklistFrames          FrameStream, the one frame connection core of every client (socket, TLS, frame extraction,
//                            bounded send queue; non-blocking steps), and FrameSocket, the blocking frame client over it
//                            (tests, tools, the conformance runner; plaintext or TLS)
//   ChecklistClient          async/await client library, plaintext or TLS: one I/O thread over ChecklistIO
//                            (epoll on Linux, poll(2) on Apple platforms) driving each connection's FrameStream,
//                            bounded send queues
//   ChecklistTesting         starts a real checklistd for tests and benchmarks; off-pool runner; test certificates;
//                            re-exports ChecklistFrames (FrameSocket); TLSTerminator, an in-process TLS front for a plaintext checklistd
//   ChecklistTransfer        snapshot <-> JSON, property lists and keyed archives (the apps' files; CLI export/import)
//   ChecklistConformance     the bad-input catalogue and happy path, run against any server
//   ChecklistFaults          the fault test of several PostgreSQL nodes: history, workload, nemesis, checker
//   ChecklistCommandLine     the one argument parser of the executables: option specs, values, --help, UsageError;
//                            the client tools' TLS options (TLSClientOptions)
//   checklistd, checklist, checklist-bench, checklist-conformance, checklist-postgres-bench, checklist-faults   executables
//   (tests only: ChecklistSnapshotFixtures, the snapshot and log tests' reference store and histories)

// The server's layers, built for release, leave out Swift's dynamic
// exclusivity checks (the compile-time ones stay): they were a seventh of
// the instructions of a PATCH with one request in flight (docs/PERFORMANCE.md,
// "Exclusivity checks"). Debug builds, which the tests run, keep them. Only
// server-side targets (ChecklistSnapshot is the server's snapshot writer and
// reader; the CLI's files go through it too): the client library's modules
// build as they are.
let serverReleaseSettings: [SwiftSetting] = [
    .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release)),
]

let package = Package(
    name: "Checklists",
    // The client side (ChecklistModel, ChecklistWire, ChecklistClient and what
    // they depend on) builds for the apps' platforms: Linux-only calls sit
    // behind `#if os(Linux)` with the Apple counterpart beside them, and
    // scripts/check-portable.py (run by CI) fails on any that does not.
    // (Mutex and Atomic, from Synchronization, need macOS 15 / iOS 18.)
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "checklistd", targets: ["checklistd"]),
        .executable(name: "checklist", targets: ["checklist"]),
        .executable(name: "checklist-bench", targets: ["checklist-bench"]),
        .executable(name: "checklist-conformance", targets: ["checklist-conformance"]),
        .executable(name: "checklist-postgres-bench", targets: ["checklist-postgres-bench"]),
        .executable(name: "checklist-faults", targets: ["checklist-faults"]),
        .library(name: "ChecklistClient", targets: ["ChecklistClient"]),
        .library(name: "ChecklistWire", targets: ["ChecklistWire"]),
        .library(name: "ChecklistTesting", targets: ["ChecklistTesting"]),
    ],
    targets: [
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        // Whole frame bodies; Linux only (Apple builds of the client use zlib).
        .systemLibrary(name: "CLibdeflate", path: "Sources/CLibdeflate", pkgConfig: "libdeflate",
                       providers: [.apt(["libdeflate-dev"])]),
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL"),
        .systemLibrary(name: "CPostgres", path: "Sources/CPostgres", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"])]),
        .target(name: "ChecklistRandom"),
        .target(name: "ChecklistLog"),
        .target(name: "ChecklistLatency"),
        .target(name: "ChecklistModel"),
        .target(name: "ChecklistThreads",
                dependencies: [.target(name: "CLinux", condition: .when(platforms: [.linux]))]),
        .target(name: "ChecklistWire",
                dependencies: ["CZlib", .target(name: "CLibdeflate", condition: .when(platforms: [.linux])), "ChecklistModel"]),
        .target(name: "ChecklistStore",
                dependencies: ["ChecklistModel"],
                swiftSettings: serverReleaseSettings),
        .target(name: "ChecklistSnapshot",
                dependencies: ["CZlib", .target(name: "CLibdeflate", condition: .when(platforms: [.linux])),
                               "ChecklistModel", "ChecklistThreads", "ChecklistWire"],
                swiftSettings: serverReleaseSettings),
        .target(name: "ChecklistPersistence",
                dependencies: ["ChecklistModel", "ChecklistThreads", "ChecklistWire", "ChecklistSnapshot"],
                swiftSettings: serverReleaseSettings),
        .target(name: "ChecklistSocket",
                dependencies: [.target(name: "CLinux", condition: .when(platforms: [.linux]))]),
        .target(name: "ChecklistIO",
                dependencies: [.target(name: "CLinux", condition: .when(platforms: [.linux])), "ChecklistSocket"]),
        .target(name: "ChecklistWebSocket", dependencies: ["COpenSSL", "ChecklistWire"]),
        .target(name: "ChecklistEventLoop",
                dependencies: ["CLinux", "ChecklistThreads", "ChecklistSocket", "ChecklistIO", "ChecklistTLS", "ChecklistWebSocket"],
                swiftSettings: serverReleaseSettings),
        .target(name: "ChecklistPostgres",
                dependencies: ["CPostgres", "ChecklistModel", "ChecklistThreads", "ChecklistWire", "ChecklistStore", "ChecklistSnapshot"]),
        .target(name: "ChecklistStorage",
                dependencies: ["CLinux", "ChecklistModel", "ChecklistThreads", "ChecklistWire",
                               "ChecklistStore", "ChecklistSnapshot", "ChecklistPersistence", "ChecklistPostgres", "ChecklistLog"],
                swiftSettings: serverReleaseSettings),
        .target(name: "ChecklistTLS", dependencies: ["COpenSSL", "ChecklistSocket"]),
        .target(name: "ChecklistJWT", dependencies: ["COpenSSL", "ChecklistWire"]),
        .target(name: "ChecklistServer",
                dependencies: ["CLinux", "ChecklistModel", "ChecklistThreads", "ChecklistWire", "ChecklistStore", "ChecklistSnapshot", "ChecklistPersistence", "ChecklistSocket", "ChecklistEventLoop", "ChecklistLatency",
                               "ChecklistTLS", "ChecklistPostgres", "ChecklistLog", "ChecklistStorage", "ChecklistJWT", "ChecklistWebSocket"],
                swiftSettings: serverReleaseSettings),
        .target(name: "ChecklistFrames",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistSocket", "ChecklistIO", "ChecklistTLS"]),
        .target(name: "ChecklistClient",
                dependencies: [.target(name: "CLinux", condition: .when(platforms: [.linux])), "ChecklistModel", "ChecklistThreads", "ChecklistWire", "ChecklistSocket", "ChecklistIO", "ChecklistTLS",
                               "ChecklistFrames"]),
        .target(name: "ChecklistTesting",
                dependencies: ["CLinux", "ChecklistModel", "ChecklistThreads", "ChecklistWire", "ChecklistSocket", "ChecklistTLS", "ChecklistFrames"]),
        .target(name: "ChecklistTransfer",
                dependencies: ["ChecklistModel", "ChecklistSnapshot"]),
        .target(name: "ChecklistConformance",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistSnapshot", "ChecklistSocket", "ChecklistFrames", "ChecklistTLS"]),
        .target(name: "ChecklistFaults",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistSocket", "ChecklistThreads", "ChecklistRandom", "ChecklistTesting"]),
        .target(name: "ChecklistCommandLine", dependencies: ["ChecklistTLS"]),
        .executableTarget(name: "checklist-faults",
                dependencies: ["ChecklistFaults", "ChecklistCommandLine"],
                          path: "Benchmarks/checklist-faults"),
        .executableTarget(name: "checklist-conformance",
                dependencies: ["ChecklistConformance", "ChecklistFrames", "ChecklistTLS", "ChecklistCommandLine"]),
        .executableTarget(name: "checklistd",
                dependencies: ["ChecklistModel", "ChecklistStore", "ChecklistSnapshot", "ChecklistPersistence", "ChecklistEventLoop", "ChecklistServer",
                               "ChecklistTLS", "ChecklistPostgres", "ChecklistCommandLine", "ChecklistStorage", "ChecklistLog", "ChecklistJWT"]),
        .executableTarget(name: "checklist",
                dependencies: ["ChecklistSnapshot", "ChecklistClient", "ChecklistTransfer", "ChecklistCommandLine"]),
        .executableTarget(name: "checklist-bench",
                dependencies: ["CLinux", "ChecklistModel", "ChecklistWire", "ChecklistSnapshot", "ChecklistSocket", "ChecklistIO", "ChecklistClient", "ChecklistTesting", "ChecklistLatency", "ChecklistRandom",
                               "ChecklistTLS", "ChecklistPostgres", "ChecklistCommandLine", "ChecklistWebSocket", "ChecklistFrames"],
                          path: "Benchmarks/checklist-bench"),
        .executableTarget(name: "checklist-postgres-bench",
                          dependencies: ["ChecklistModel", "ChecklistSnapshot", "ChecklistPersistence", "ChecklistPostgres", "ChecklistStore",
                                         "ChecklistServer", "ChecklistTesting", "ChecklistCommandLine", "ChecklistStorage", "ChecklistLog"],
                          path: "Benchmarks/checklist-postgres-bench"),
        .testTarget(name: "ChecklistWireTests",
                dependencies: ["CZlib", "ChecklistModel", "ChecklistWire", "ChecklistRandom"],
                    resources: [.copy("../../Protocol/vectors")]),
        .testTarget(name: "ChecklistStoreTests",
                dependencies: ["ChecklistModel", "ChecklistStore", "ChecklistRandom"]),
        // Shared by the snapshot and persistence tests: a reference store, a
        // random history, temporary directories. Not a product.
        .target(name: "ChecklistSnapshotFixtures",
                dependencies: ["ChecklistModel", "ChecklistSnapshot", "ChecklistRandom"],
                path: "Tests/ChecklistSnapshotFixtures"),
        .testTarget(name: "ChecklistSnapshotTests",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistSnapshot", "ChecklistSnapshotFixtures", "ChecklistRandom"]),
        .testTarget(name: "ChecklistPersistenceTests",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistSnapshot", "ChecklistPersistence", "ChecklistSnapshotFixtures", "ChecklistRandom"]),
        .testTarget(name: "ChecklistEventLoopTests",
                dependencies: ["ChecklistThreads", "ChecklistSocket", "ChecklistIO", "ChecklistEventLoop"]),
        .testTarget(name: "ServerMetricsTests",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistServer", "ChecklistStore", "ChecklistLatency", "ChecklistStorage", "ChecklistLog"]),
        .testTarget(name: "ServerDurabilityTests",
                dependencies: ["ChecklistModel", "ChecklistThreads", "ChecklistWire", "ChecklistStore", "ChecklistSnapshot", "ChecklistPersistence", "ChecklistServer", "ChecklistTesting", "ChecklistStorage", "ChecklistLog"]),
        .testTarget(name: "LiveSyncTests",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistStore", "ChecklistSocket", "ChecklistServer", "ChecklistClient", "ChecklistTesting", "ChecklistRandom", "ChecklistStorage", "ChecklistLog"]),
        .testTarget(name: "AccessControlTests",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistStore", "ChecklistServer", "ChecklistLog", "ChecklistJWT"]),
        .testTarget(name: "IntegrationTests",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistSnapshot", "ChecklistSocket", "ChecklistIO", "ChecklistClient", "ChecklistTesting", "ChecklistConformance", "ChecklistRandom",
                               "ChecklistTLS", "ChecklistPostgres", "ChecklistStorage", "ChecklistLog"]),
        .testTarget(name: "ChecklistWebSocketTests",
                dependencies: ["ChecklistWebSocket", "ChecklistWire"],
                    resources: [.copy("../../Protocol/vectors/websocket")]),
        .testTarget(name: "ChecklistTLSTests",
                dependencies: ["ChecklistTLS", "ChecklistTesting"]),
        .testTarget(name: "ChecklistTransferTests",
                dependencies: ["ChecklistModel", "ChecklistSnapshot", "ChecklistTransfer"]),
        // The argument parsers of the executables, through `@testable import` of the executable targets.
        .testTarget(name: "ExecutableArgumentTests",
                dependencies: ["checklistd", "checklist", "checklist-bench", "checklist-conformance", "checklist-faults",
                               "checklist-postgres-bench",
                               "ChecklistServer", "ChecklistPersistence", "ChecklistClient", "ChecklistCommandLine", "ChecklistStorage", "ChecklistLog"]),
        .testTarget(name: "ChecklistCommandLineTests",
                dependencies: ["ChecklistCommandLine"]),
        .testTarget(name: "ChecklistFaultsTests",
                dependencies: ["ChecklistFaults", "ChecklistModel", "ChecklistWire", "ChecklistTesting"]),
        .testTarget(name: "ChecklistPostgresTests",
                dependencies: ["ChecklistPostgres", "ChecklistSnapshot", "ChecklistPersistence", "ChecklistModel", "ChecklistStore", "ChecklistSocket", "ChecklistTesting"]),
    ],
    swiftLanguageModes: [.v6]
)
