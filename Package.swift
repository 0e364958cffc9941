// swift-tools-version:6.0
import PackageDescription

// Layers, bottom to top (no module imports one above it):
//   CZlib, CLinux            C libraries and the Linux shim (epoll, eventfd, accept4, malloc_trim)
//   ChecklistModel           value types of the domain; no I/O
//   ChecklistThreads         one thread helper, one lock with deadline waits, a count-down latch
//   ChecklistWire            protocol v1 codec: frames, messages, compression; no I/O
//   ChecklistStore           namespaces, lists, the one apply path; no sockets
//   ChecklistSnapshot        the snapshot file format: reader, writer, gzip, CRC32
//   ChecklistPersistence     the server's write-ahead log, data directory and recovery
//   ChecklistSocket          thin POSIX socket helpers shared by server and client
//   ChecklistEventLoop       epoll event loops, connections, timers, signals, TCP server; knows no protocol
//   ChecklistServer          protocol sessions, live sync, access control, metrics, transfers
//   ChecklistClient          async/await client library
//   ChecklistTesting         starts a real checklistd for tests and benchmarks; off-pool runner
//   ChecklistTransfer        snapshot <-> JSON and the apps' Checklists.plist (CLI export/import)
//   ChecklistConformance     the bad-input catalogue and happy path, run against any server
//   checklistd, checklist, checklist-bench, checklist-conformance   executables
let package = Package(
    name: "Checklists",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "checklistd", targets: ["checklistd"]),
        .executable(name: "checklist", targets: ["checklist"]),
        .executable(name: "checklist-bench", targets: ["checklist-bench"]),
        .executable(name: "checklist-conformance", targets: ["checklist-conformance"]),
        .library(name: "ChecklistClient", targets: ["ChecklistClient"]),
        .library(name: "ChecklistWire", targets: ["ChecklistWire"]),
        .library(name: "ChecklistTesting", targets: ["ChecklistTesting"]),
    ],
    targets: [
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        .target(name: "ChecklistModel"),
        .target(name: "ChecklistThreads",
                dependencies: ["CLinux"]),
        .target(name: "ChecklistWire",
                dependencies: ["CZlib", "ChecklistModel"]),
        .target(name: "ChecklistStore",
                dependencies: ["ChecklistModel"]),
        .target(name: "ChecklistSnapshot",
                dependencies: ["CZlib", "ChecklistModel", "ChecklistThreads", "ChecklistWire"]),
        .target(name: "ChecklistPersistence",
                dependencies: ["ChecklistModel", "ChecklistThreads", "ChecklistWire", "ChecklistSnapshot"]),
        .target(name: "ChecklistSocket",
                dependencies: ["CLinux"]),
        .target(name: "ChecklistEventLoop",
                dependencies: ["CLinux", "ChecklistThreads", "ChecklistSocket"]),
        .target(name: "ChecklistServer",
                dependencies: ["CLinux", "ChecklistModel", "ChecklistThreads", "ChecklistWire", "ChecklistStore", "ChecklistSnapshot", "ChecklistPersistence", "ChecklistSocket", "ChecklistEventLoop"]),
        .target(name: "ChecklistClient",
                dependencies: ["ChecklistModel", "ChecklistThreads", "ChecklistWire", "ChecklistSocket"]),
        .target(name: "ChecklistTesting",
                dependencies: ["CLinux", "ChecklistModel", "ChecklistThreads", "ChecklistWire", "ChecklistSocket"]),
        .target(name: "ChecklistTransfer",
                dependencies: ["ChecklistModel", "ChecklistSnapshot"]),
        .target(name: "ChecklistConformance",
                dependencies: ["CZlib", "ChecklistModel", "ChecklistWire", "ChecklistSocket"]),
        .executableTarget(name: "checklist-conformance",
                dependencies: ["ChecklistConformance"]),
        .executableTarget(name: "checklistd",
                dependencies: ["ChecklistModel", "ChecklistStore", "ChecklistSnapshot", "ChecklistPersistence", "ChecklistEventLoop", "ChecklistServer"]),
        .executableTarget(name: "checklist",
                dependencies: ["ChecklistSnapshot", "ChecklistClient", "ChecklistTransfer"]),
        .executableTarget(name: "checklist-bench",
                dependencies: ["CLinux", "ChecklistModel", "ChecklistWire", "ChecklistSnapshot", "ChecklistSocket", "ChecklistClient", "ChecklistTesting"],
                          path: "Benchmarks/checklist-bench"),
        .testTarget(name: "ChecklistWireTests",
                dependencies: ["ChecklistModel", "ChecklistWire"],
                    resources: [.copy("../../Protocol/vectors")]),
        .testTarget(name: "ChecklistStoreTests",
                dependencies: ["ChecklistModel", "ChecklistStore"]),
        // Shared by the snapshot and persistence tests: a reference store, a
        // random history, temporary directories. Not a product.
        .target(name: "ChecklistSnapshotFixtures",
                dependencies: ["ChecklistModel", "ChecklistSnapshot"],
                path: "Tests/ChecklistSnapshotFixtures"),
        .testTarget(name: "ChecklistSnapshotTests",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistSnapshot", "ChecklistSnapshotFixtures"]),
        .testTarget(name: "ChecklistPersistenceTests",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistSnapshot", "ChecklistPersistence", "ChecklistSnapshotFixtures"]),
        .testTarget(name: "ChecklistEventLoopTests",
                dependencies: ["ChecklistThreads", "ChecklistSocket", "ChecklistEventLoop"]),
        .testTarget(name: "ServerMetricsTests",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistServer"]),
        .testTarget(name: "ServerDurabilityTests",
                dependencies: ["ChecklistModel", "ChecklistThreads", "ChecklistWire", "ChecklistStore", "ChecklistSnapshot", "ChecklistPersistence", "ChecklistServer", "ChecklistTesting"]),
        .testTarget(name: "LiveSyncTests",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistStore", "ChecklistSocket", "ChecklistServer", "ChecklistClient", "ChecklistTesting"]),
        .testTarget(name: "AccessControlTests",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistStore", "ChecklistServer"]),
        .testTarget(name: "IntegrationTests",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistSnapshot", "ChecklistSocket", "ChecklistClient", "ChecklistTesting", "ChecklistConformance"]),
        .testTarget(name: "ChecklistTransferTests",
                dependencies: ["ChecklistModel", "ChecklistSnapshot", "ChecklistTransfer"]),
    ],
    swiftLanguageModes: [.v6]
)
