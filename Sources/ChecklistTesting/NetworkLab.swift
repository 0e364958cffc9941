import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Separate "hosts" on one machine, for tests that need a real network
/// between processes: network namespaces (`ip netns add`) joined by veth
/// pairs (`ip link add ... type veth peer ...`), each link a /30 of
/// 10.213.0.0/16 with both ends up. A link is cut with `ip link set DEV
/// down` (no RST reaches either side, as when a cable is pulled) and
/// restored with `up`. Processes run on a host through `ip netns exec`
/// (`LabHost.command`).
///
///     let lab = try NetworkLab()
///     defer { lab.remove() }
///     let db = try lab.addHost("db"), node = try lab.addHost("node")
///     let wire = try lab.link(node, db)           // node <-> db
///     let front = try lab.link(.testProcess, node) // the test reaches the node
///     ... start processes with db.command(...), node.command(...) ...
///     try wire.cut(); ...; try wire.restore()
///
/// **Names.** A lab owns one *block* `B` (0-255): the addresses
/// 10.213.B.0/24 and every namespace and device named `cknetB-...`. It
/// holds the block with an exclusive `flock` on `/run/lock/cknet-B.lock`
/// for its lifetime, so labs of parallel test runs (and of parallel tests
/// in one run) never share names or addresses; the kernel drops the lock
/// of a crashed run.
///
/// **Clean-up.** `remove()` (also on deinit) deletes everything named
/// with the block's prefix: the test process's devices, then every
/// namespace after killing what still runs in it. A new lab first does the
/// same for every `cknet` block whose lock nobody holds: the leftovers of
/// a run that crashed or was killed.
///
/// Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) and iproute2's `ip`:
/// `unavailableReason` says why a lab cannot be made here, and test suites
/// are skipped with it.
public final class NetworkLab: Sendable {
    /// The prefix of every namespace and device a lab makes.
    public static let namePrefix = "cknet"
    /// The third byte of this lab's addresses, and its names' number.
    public let block: Int
    private let lockFD: Int32
    private let state = Mutex(State())

    private struct State {
        var nextLink = 0
        var hosts: Set<String> = []
        var removed = false
    }

    /// Most links one lab makes (the /30s of its /24).
    public static let maximumLinks = 64

    /// Takes a free block and clears the leftovers of crashed runs.
    ///
    /// - Throws: `ChildProcessError` when every block is taken or `ip` fails.
    public init() throws {
        guard IPCommand.path != nil else { throw ChildProcessError("no iproute2 ip command") }
        let start = Int(getpid()) % 256
        var taken: (block: Int, fd: Int32)?
        for offset in 0..<256 where taken == nil {
            let candidate = (start + offset) % 256
            if let fd = Self.lock(block: candidate) { taken = (candidate, fd) }
        }
        guard let taken else { throw ChildProcessError("all 256 network lab blocks are in use") }
        block = taken.block
        lockFD = taken.fd
        Self.removeNamed(block: block)
        Self.removeLeftovers()
    }

    deinit { remove() }

    /// `cknetB-`: the prefix of this lab's names.
    public var prefix: String { "\(Self.namePrefix)\(block)-" }

    /// Makes a host: namespace `cknetB-NAME` with its loopback up.
    ///
    /// - Parameter name: 1-8 lowercase letters or digits, unique in the lab.
    public func addHost(_ name: String) throws -> LabHost {
        precondition((1...8).contains(name.count) && name.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber) },
                     "a lab host name is 1-8 lowercase letters or digits")
        let namespace = prefix + name
        try state.withLock { state in
            guard !state.removed else { throw ChildProcessError("the network lab was removed") }
            guard state.hosts.insert(namespace).inserted else { throw ChildProcessError("lab host \(name) exists") }
        }
        try IPCommand.run(["netns", "add", namespace])
        let host = LabHost(namespace: namespace)
        try IPCommand.run(host.ipArguments(["link", "set", "dev", "lo", "up"]))
        return host
    }

    /// Joins `first` and `second` (either may be `.testProcess`) with a
    /// veth pair: `first` gets 10.213.B.(4i+1), `second` 10.213.B.(4i+2), on
    /// /30 `i`; both ends up.
    public func link(_ first: LabHost, _ second: LabHost) throws -> LabLink {
        precondition(first != second, "a link joins two different hosts")
        let index = try state.withLock { state -> Int in
            guard !state.removed else { throw ChildProcessError("the network lab was removed") }
            guard state.nextLink < Self.maximumLinks else { throw ChildProcessError("a lab makes at most \(Self.maximumLinks) links") }
            defer { state.nextLink += 1 }
            return state.nextLink
        }
        let link = LabLink(ends: [first, second], devices: ["\(prefix)\(index)a", "\(prefix)\(index)b"],
                           addresses: ["10.213.\(block).\(4 * index + 1)", "10.213.\(block).\(4 * index + 2)"])
        var add = ["link", "add", link.devices[0]]
        if let namespace = first.namespace { add += ["netns", namespace] }
        add += ["type", "veth", "peer", "name", link.devices[1]]
        if let namespace = second.namespace { add += ["netns", namespace] }
        try IPCommand.run(add)
        for end in 0..<2 {
            try IPCommand.run(link.ends[end].ipArguments(["addr", "add", link.addresses[end] + "/30", "dev", link.devices[end]]))
        }
        try link.restore()
        return link
    }

    /// Deletes every device and namespace of this lab (killing the processes
    /// still in them) and gives its block back. Harmless when done already.
    public func remove() {
        let first = state.withLock { state -> Bool in
            defer { state.removed = true }
            return !state.removed
        }
        guard first else { return }
        Self.removeNamed(block: block)
        close(lockFD)  // releases the flock
    }

    // MARK: Blocks and leftovers

    /// Opens and locks the block's lock file; nil when another lab holds it.
    private static func lock(block: Int) -> Int32? {
        let directory = FileManager.default.fileExists(atPath: "/run/lock") ? "/run/lock" : "/tmp"
        // Close-on-exec: a child (PostgreSQL, checklistd) must not inherit
        // the lock and keep it past this lab.
        let fd = open("\(directory)/\(namePrefix)-\(block).lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return nil }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Removes what is left of labs whose block nobody holds.
    private static func removeLeftovers() {
        let blocks = Set((IPCommand.namespaces() + IPCommand.devices()).compactMap(blockNumber))
        for block in blocks.sorted() {
            guard let fd = lock(block: block) else { continue }  // a live lab's
            removeNamed(block: block)
            close(fd)
        }
    }

    /// The block of a lab name (`cknet12-db` is 12); nil for other names.
    static func blockNumber(of name: String) -> Int? {
        guard name.hasPrefix(namePrefix), let dash = name.firstIndex(of: "-") else { return nil }
        return Int(name[name.index(name.startIndex, offsetBy: namePrefix.count)..<dash])
    }

    /// Deletes the test process's devices named for `block` (synchronously:
    /// a namespace's devices go only when the kernel gets round to it), then
    /// its namespaces, killing what still runs in them.
    private static func removeNamed(block: Int) {
        let prefix = "\(namePrefix)\(block)-"
        for device in IPCommand.devices() where device.hasPrefix(prefix) {
            _ = try? IPCommand.run(["link", "delete", "dev", device])
        }
        for namespace in IPCommand.namespaces() where namespace.hasPrefix(prefix) {
            for pid in IPCommand.pids(in: namespace) { kill(pid, SIGKILL) }
            _ = try? IPCommand.run(["netns", "delete", namespace])
        }
    }

    // MARK: Availability

    /// Why a lab cannot be made on this machine (nil: it can). Found once,
    /// on first use, by making and removing a lab with one host and one link.
    public static let unavailableReason: String? = {
        guard geteuid() == 0 else { return "network namespaces need root (CAP_NET_ADMIN, CAP_SYS_ADMIN); this runs as uid \(geteuid())" }
        guard IPCommand.path != nil else { return "no iproute2 ip command (Debian package iproute2)" }
        do {
            let lab = try NetworkLab()
            defer { lab.remove() }
            _ = try lab.link(.testProcess, try lab.addHost("probe"))
            return nil
        } catch {
            return "a network namespace with a veth pair could not be made: \(error)"
        }
    }()

    /// Whether labs can be made here (`unavailableReason` is nil).
    public static var isAvailable: Bool {
        if let reason = unavailableReason {
            FileHandle.standardError.write(Data("NetworkLab unavailable: \(reason)\n".utf8))
            return false
        }
        return true
    }
}
