#if canImport(Glibc)
import Glibc
#endif

/// A host of a `NetworkLab`: a network namespace of its own, or the test
/// process's namespace (`testProcess`).
public struct LabHost: Sendable, Hashable, CustomStringConvertible {
    /// The namespace's name (`cknetB-NAME`); nil for the test process's.
    public let namespace: String?

    /// The namespace the test process (and its in-process relays) runs in.
    public static let testProcess = LabHost(namespace: nil)

    /// `executable arguments` as a command that runs on this host:
    /// `ip netns exec NAMESPACE executable arguments` (which execs the
    /// program after entering the namespace, so the pid and the signals
    /// are the program's own), or unchanged for `testProcess`.
    public func command(_ executable: String, _ arguments: [String]) -> (executable: String, arguments: [String]) {
        guard let namespace, let ip = IPCommand.path else { return (executable, arguments) }
        return (ip, ["netns", "exec", namespace, executable] + arguments)
    }

    /// Arguments of `ip` that act inside this host (`-n NAMESPACE ...`).
    func ipArguments(_ arguments: [String]) -> [String] {
        namespace.map { ["-n", $0] + arguments } ?? arguments
    }

    public var description: String { namespace ?? "the test process's namespace" }
}

/// A veth pair between two hosts of a `NetworkLab`, a /30 with one address
/// at each end.
public final class LabLink: Sendable {
    /// The two hosts, in the order given to `NetworkLab.link`.
    public let ends: [LabHost]
    /// The device at each end (`cknetB-Ia`, `cknetB-Ib`).
    public let devices: [String]
    /// The IPv4 address at each end.
    public let addresses: [String]

    init(ends: [LabHost], devices: [String], addresses: [String]) {
        self.ends = ends
        self.devices = devices
        self.addresses = addresses
    }

    /// The address `host` has on this link.
    public func address(of host: LabHost) -> String {
        guard let end = ends.firstIndex(of: host) else { preconditionFailure("\(host) is not on this link") }
        return addresses[end]
    }

    /// The address of the other end, as `host` reaches it.
    public func address(seenFrom host: LabHost) -> String {
        guard let end = ends.firstIndex(of: host) else { preconditionFailure("\(host) is not on this link") }
        return addresses[1 - end]
    }

    /// Cuts the link: both devices down. Nothing is sent to either side
    /// (no FIN, no RST); their packets are dropped from now on.
    public func cut() throws {
        for end in 0..<2 { try IPCommand.run(ends[end].ipArguments(["link", "set", "dev", devices[end], "down"])) }
    }

    /// Brings both devices up again (their addresses stayed).
    public func restore() throws {
        for end in 0..<2 { try IPCommand.run(ends[end].ipArguments(["link", "set", "dev", devices[end], "up"])) }
    }
}

/// iproute2's `ip`, run to completion.
enum IPCommand {
    static let path: String? = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { access($0, X_OK) == 0 }

    /// Runs `ip arguments`; throws with its output when it fails.
    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        guard let path else { throw ChildProcessError("no iproute2 ip command") }
        let result = try ProcessRunner.run(executable: path, arguments: arguments, timeout: .seconds(30))
        guard result.status == 0 else {
            throw ChildProcessError("ip \(arguments.joined(separator: " ")) \(result.exitStatus): \(result.stderr)\(result.stdout)")
        }
        return result.stdout
    }

    /// The names of the network namespaces (`ip netns list`: "NAME" or
    /// "NAME (id: N)" per line).
    static func namespaces() -> [String] {
        ((try? run(["netns", "list"])) ?? "").split(separator: "\n").compactMap { line in
            line.split(separator: " ").first.map(String.init)
        }
    }

    /// The names of the test process's network devices (`ip -o link show`:
    /// "N: NAME[@PEER]: ..." per line).
    static func devices() -> [String] {
        ((try? run(["-o", "link", "show"])) ?? "").split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count >= 2 else { return nil }
            return fields[1].split(separator: "@").first.map { String($0.hasSuffix(":") ? $0.dropLast() : $0) }
        }
    }

    /// The processes running in `namespace` (`ip netns pids`).
    static func pids(in namespace: String) -> [pid_t] {
        ((try? run(["netns", "pids", namespace])) ?? "").split(separator: "\n").compactMap { pid_t($0) }
    }
}
