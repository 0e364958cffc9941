// swift-tools-version:6.0
import PackageDescription

// Layers, bottom to top (no module imports one above it):
//   CZlib, CLinux            C libraries and the Linux shim (epoll, eventfd, accept4)
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
        .target(name: "ChecklistThreads"),
        .target(name: "ChecklistWire", dependencies: ["ChecklistModel", "CZlib"]),
        .target(name: "ChecklistStore", dependencies: ["ChecklistModel"]),
        .target(name: "ChecklistSnapshot", dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistThreads", "CZlib"]),
        .target(name: "ChecklistPersistence",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistSnapshot", "ChecklistThreads"]),
        .target(name: "ChecklistSocket", dependencies: ["CLinux"]),
        .target(name: "ChecklistEventLoop", dependencies: ["ChecklistSocket", "ChecklistThreads", "CLinux"]),
        .target(name: "ChecklistServer",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistStore", "ChecklistSnapshot", "ChecklistPersistence",
                               "ChecklistSocket", "ChecklistEventLoop", "ChecklistThreads", "CLinux"]),
        .target(name: "ChecklistClient",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistSocket", "ChecklistThreads"]),
        .target(name: "ChecklistTesting",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistSocket", "ChecklistThreads", "CLinux"]),
        .target(name: "ChecklistTransfer", dependencies: ["ChecklistModel", "ChecklistSnapshot"]),
        .target(name: "ChecklistConformance", dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistSocket", "CZlib"]),
        .executableTarget(name: "checklist-conformance", dependencies: ["ChecklistConformance"]),
        .executableTarget(name: "checklistd",
                          dependencies: ["ChecklistModel", "ChecklistServer", "ChecklistStore", "ChecklistSnapshot",
                                         "ChecklistPersistence"]),
        .executableTarget(name: "checklist", dependencies: ["ChecklistClient", "ChecklistTransfer", "ChecklistSnapshot"]),
        .executableTarget(name: "checklist-bench",
                          dependencies: ["ChecklistModel", "ChecklistClient", "ChecklistWire", "ChecklistTesting", "ChecklistSocket",
                                         "CLinux", "ChecklistSnapshot"],
                          path: "Benchmarks/checklist-bench"),
        .testTarget(name: "ChecklistWireTests", dependencies: ["ChecklistWire"],
                    resources: [.copy("../../Protocol/vectors")]),
        .testTarget(name: "ChecklistStoreTests", dependencies: ["ChecklistStore"]),
        // Shared by the snapshot and persistence tests: a reference store, a
        // random history, temporary directories. Not a product.
        .target(name: "ChecklistSnapshotFixtures", dependencies: ["ChecklistModel", "ChecklistSnapshot"],
                path: "Tests/ChecklistSnapshotFixtures"),
        .testTarget(name: "ChecklistSnapshotTests", dependencies: ["ChecklistSnapshot", "ChecklistSnapshotFixtures"]),
        .testTarget(name: "ChecklistPersistenceTests",
                    dependencies: ["ChecklistPersistence", "ChecklistSnapshot", "ChecklistSnapshotFixtures"]),
        .testTarget(name: "ChecklistEventLoopTests", dependencies: ["ChecklistEventLoop", "ChecklistSocket", "ChecklistThreads"]),
        .testTarget(name: "ServerMetricsTests", dependencies: ["ChecklistServer"]),
        .testTarget(name: "ServerDurabilityTests",
                    dependencies: ["ChecklistServer", "ChecklistStore", "ChecklistSnapshot", "ChecklistPersistence", "ChecklistWire",
                                   "ChecklistTesting", "ChecklistThreads"]),
        .testTarget(name: "LiveSyncTests",
                    dependencies: ["ChecklistServer", "ChecklistStore", "ChecklistClient", "ChecklistSocket", "ChecklistTesting"]),
        .testTarget(name: "AccessControlTests", dependencies: ["ChecklistServer", "ChecklistStore", "ChecklistWire"]),
        .testTarget(name: "IntegrationTests",
                    dependencies: ["ChecklistClient", "ChecklistWire", "ChecklistSocket", "ChecklistTesting",
                                   "ChecklistConformance", "ChecklistSnapshot", "ChecklistTransfer"]),
        .testTarget(name: "ChecklistTransferTests", dependencies: ["ChecklistTransfer", "ChecklistSnapshot"]),
    ],
    swiftLanguageModes: [.v6]
)
