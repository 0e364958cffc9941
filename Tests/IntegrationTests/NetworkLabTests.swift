import ChecklistClient
import ChecklistTesting
import Foundation
import Testing

/// The suites that make network labs, one test at a time: the harness's
/// own tests look at the names labs leave, which a lab made meanwhile by
/// another test of this process could take over.
@Suite(.serialized) enum NetworkLabSuites {}

/// The harness that puts processes on separate hosts (`NetworkLab`): a
/// process on a host is reached over its link, a cut link carries nothing,
/// and nothing of a lab outlives it or a crashed run.
extension NetworkLabSuites {
    @Suite(.enabled(if: NetworkLab.isAvailable,
                    "network namespaces cannot be made here (they need root and iproute2's ip; the reason is on stderr): skipped"),
           .timeLimit(.minutes(3)))
    struct NetworkLabTests {
        private func ip(_ arguments: [String]) throws -> String {
            try ProcessRunner.run(executable: "/usr/sbin/ip", arguments: arguments).stdout
        }

        private func labNames() throws -> String {
            try ip(["netns", "list"]) + ip(["-o", "link", "show"])
        }

        @Test func aServerOnAHostIsReachedOverItsLinkUntilTheLinkIsCut() async throws {
            let lab = try NetworkLab()
            defer { lab.remove() }
            let host = try lab.addHost("server")
            let link = try lab.link(.testProcess, host)
            let data = try TemporaryDirectory(prefix: "network-lab")
            let command = host.command(try ProductLocator.path(of: "checklistd"), [
                "--host", link.address(of: host), "--port", "0", "--insecure-bind", "--data-dir", data.path])
            let server = try ServerProcess.start(executable: command.executable, arguments: command.arguments)
            defer { server.stop() }
            #expect(server.host == link.address(of: host))
            #expect(link.address(seenFrom: .testProcess) == link.address(of: host))

            let client = try await ChecklistConnection.connect(host: server.host, port: server.port, clientName: "lab")
            _ = try await client.ping()
            await client.close()

            // Inside the host, the test process's loopback is not there.
            let inside = try ProcessRunner.run(executable: "/usr/sbin/ip", arguments: ["-n", try #require(host.namespace), "-o", "addr"])
            #expect(inside.stdout.contains(link.address(of: host) + "/30"))
            #expect(!inside.stdout.contains(link.address(of: .testProcess) + "/"))

            try link.cut()
            await #expect(throws: ClientError.self) {
                _ = try await ChecklistConnection.connect(host: server.host, port: server.port, clientName: "cut", timeout: .seconds(2))
            }
            try link.restore()
            let again = try await ChecklistConnection.connect(host: server.host, port: server.port, clientName: "restored")
            _ = try await again.ping()
            await again.close()
        }

        @Test func removeLeavesNothingAndANewLabClearsACrashedRunsLeftovers() throws {
            let lab = try NetworkLab()
            let a = try lab.addHost("a"), b = try lab.addHost("b")
            _ = try lab.link(a, b)
            _ = try lab.link(.testProcess, a)
            // The namespaces, and the one device in the test process's namespace.
            let made = ["a", "b", "1a"].map { lab.prefix + $0 }
            let before = try labNames()
            for name in made { #expect(before.contains(name), "\(name)") }
            lab.remove()
            let after = try labNames()
            for name in made { #expect(!after.contains(name), "\(name) outlived its lab") }

            // What a run killed mid-test leaves: a namespace and a device of a
            // block nobody holds any more.
            let stale = "\(lab.prefix)stale"
            try ProcessRunner.run(executable: "/usr/sbin/ip", arguments: ["netns", "add", stale]).checked()
            try ProcessRunner.run(executable: "/usr/sbin/ip", arguments: ["link", "add", "\(lab.prefix)9a", "type", "veth",
                                                                          "peer", "name", "\(lab.prefix)9b"]).checked()
            let next = try NetworkLab()
            defer { next.remove() }
            let left = try labNames()
            #expect(!left.contains(stale))
            #expect(!left.contains("\(lab.prefix)9a"))
        }

        @Test func parallelLabsTakeDifferentBlocks() throws {
            let labs = try (0..<3).map { _ in try NetworkLab() }
            defer { for lab in labs { lab.remove() } }
            #expect(Set(labs.map(\.block)).count == 3)
        }
    }
}

extension ProcessRunner.Result {
    /// Throws with the output when the command failed.
    @discardableResult
    func checked() throws -> Self {
        guard status == 0 else { throw ChildProcessError("exited with \(exitStatus): \(stdout)\(stderr)") }
        return self
    }
}
