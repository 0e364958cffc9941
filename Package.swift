// swift-tools-version:6.0
import PackageDescription

// Layers, bottom to top (no module imports one above it):
//   CZlib, CLinux, COpenSSL  C libraries and the Linux shim (epoll, eventfd, accept4)
//   ChecklistModel           value types of the domain; no I/O
//   ChecklistWire            protocol v1 codec: frames, messages, compression; no I/O
//   ChecklistStore           namespaces, lists, the one apply path; no sockets
//   ChecklistSocket          thin POSIX socket helpers shared by server and client
//   ChecklistTLS             TLS contexts and sessions over memory buffers (OpenSSL); no sockets
//   ChecklistServer          epoll event loops, connections, request dispatch
//   ChecklistClient          async/await client library, plaintext or TLS
//   ChecklistTesting         starts a real checklistd for tests and benchmarks; test certificates
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
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL"),
        .target(name: "ChecklistModel"),
        .target(name: "ChecklistWire", dependencies: ["ChecklistModel", "CZlib"]),
        .target(name: "ChecklistStore", dependencies: ["ChecklistModel"]),
        .target(name: "ChecklistPersistence", dependencies: ["ChecklistModel", "ChecklistWire", "CZlib"]),
        .target(name: "ChecklistSocket", dependencies: ["CLinux"]),
        .target(name: "ChecklistTLS", dependencies: ["COpenSSL"]),
        .target(name: "ChecklistServer",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistStore", "ChecklistPersistence", "ChecklistSocket", "CLinux"]),
        .target(name: "ChecklistClient",
                dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistSocket", "ChecklistTLS"]),
        .target(name: "ChecklistTesting", dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistSocket", "ChecklistTLS"]),
        .target(name: "ChecklistTransfer", dependencies: ["ChecklistModel", "ChecklistPersistence"]),
        .target(name: "ChecklistConformance", dependencies: ["ChecklistModel", "ChecklistWire", "ChecklistSocket", "CZlib"]),
        .executableTarget(name: "checklist-conformance", dependencies: ["ChecklistConformance"]),
        .executableTarget(name: "checklistd", dependencies: ["ChecklistServer", "ChecklistStore", "ChecklistPersistence"]),
        .executableTarget(name: "checklist", dependencies: ["ChecklistClient", "ChecklistTransfer"]),
        .executableTarget(name: "checklist-bench",
                          dependencies: ["ChecklistClient", "ChecklistWire", "ChecklistTesting", "ChecklistSocket", "CLinux",
                                         "ChecklistPersistence"],
                          path: "Benchmarks/checklist-bench"),
        .testTarget(name: "ChecklistWireTests", dependencies: ["ChecklistWire"],
                    resources: [.copy("../../Protocol/vectors")]),
        .testTarget(name: "ChecklistStoreTests", dependencies: ["ChecklistStore"]),
        .testTarget(name: "ChecklistPersistenceTests", dependencies: ["ChecklistPersistence"]),
        .testTarget(name: "ServerIOTests", dependencies: ["ChecklistServer", "ChecklistSocket"]),
        .testTarget(name: "ServerDurabilityTests",
                    dependencies: ["ChecklistServer", "ChecklistStore", "ChecklistPersistence", "ChecklistWire", "ChecklistTesting"]),
        .testTarget(name: "LiveSyncTests",
                    dependencies: ["ChecklistServer", "ChecklistStore", "ChecklistClient", "ChecklistSocket", "ChecklistTesting"]),
        .testTarget(name: "AccessControlTests", dependencies: ["ChecklistServer", "ChecklistStore", "ChecklistWire"]),
        .testTarget(name: "IntegrationTests",
                    dependencies: ["ChecklistClient", "ChecklistWire", "ChecklistSocket", "ChecklistTesting",
                                   "ChecklistConformance", "ChecklistPersistence", "ChecklistTransfer", "ChecklistTLS"]),
        .testTarget(name: "ChecklistTLSTests", dependencies: ["ChecklistTLS", "ChecklistTesting"]),
        .testTarget(name: "ChecklistTransferTests", dependencies: ["ChecklistTransfer", "ChecklistPersistence"]),
    ],
    swiftLanguageModes: [.v6]
)
