import ChecklistCommandLine
import ChecklistConformance
import ChecklistTLS
import ChecklistFrames
#if canImport(Glibc)
import Glibc
#endif

/// checklist-conformance HOST:PORT [options]: runs the catalogue of
/// Protocol/SPEC.md section 8 and a happy path through every message
/// against any server that claims to speak the protocol.
let arguments: Arguments
do throws(UsageError) {
    arguments = try Arguments(Array(CommandLine.arguments.dropFirst()),
                              environmentToken: getenv("CHECKLIST_TOKEN").map { String(cString: $0) },
                              environment: TLSClientOptions.processEnvironment())
} catch {
    CommandLineTool.fail(error, program: "checklist-conformance")
}

func fail(_ message: String) -> Never {
    CommandLineTool.fail(UsageError(message, usage: arguments.usage), program: "checklist-conformance")
}

let host: String, port: UInt16
switch arguments.action {
case .help:
    CommandLineTool.printHelpAndExit(HelpText.help(Arguments.command, nil))
case .list:
    for c in Catalogue.all { print("\(c.id)\t\(c.group.rawValue)\t\(c.input)") }
    exit(0)
case .markdown:
    print(CatalogueTable.markdown(Catalogue.badInputs))
    exit(0)
case .run(let h, let p):
    (host, port) = (h, p)
}
let (token, secondToken, idle, timeout) = (arguments.token, arguments.secondToken, arguments.idle, arguments.timeout)

var cases = Catalogue.all
if let only = arguments.only {
    let unknown = only.subtracting(cases.map(\.id))
    guard unknown.isEmpty else { fail("no case named \(unknown.sorted().joined(separator: ", ")) (see --list)") }
    cases = cases.filter { only.contains($0.id) }
}

// The TLS files are read once (a bad one is a usage error), and one
// handshake is tried before any case: a certificate that does not verify
// stops the run with the reason instead of failing every case alike.
var tlsContext: TLSContext?
do {
    tlsContext = try arguments.tls.checkedConfiguration().map { try TLSContext(client: $0) }
} catch {
    fail("\(error)")
}
let target = Target(host: host, port: port, token: token, secondToken: secondToken, idle: idle, timeout: timeout, tls: tlsContext)
var transport = ""
if tlsContext != nil {
    do {
        let probe = try target.connect()
        transport = " over \(probe.tlsVersion.map { "\($0)" } ?? "TLS")"
        probe.close()
    } catch let failure as FrameSocket.Failure where failure.code == .tls {
        var text = "checklist-conformance: \(failure.description)\n"
        text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
        exit(3)
    } catch {
        transport = " over TLS"  // unreachable: every case fails and says so
    }
}
print("checklist-conformance: \(cases.count) cases against \(arguments.address ?? "")" + transport
      + (token == nil ? " (no token)" : " (with a token)"))
let results = ConformanceRunner.runAll(cases, against: target) { result in print(result.line) }
let failed = results.filter { $0.status == .failed }.count
let skipped = results.filter { $0.status == .skipped }.count
print("\(results.count - failed - skipped) passed, \(failed) failed, \(skipped) skipped")
exit(failed == 0 ? 0 : 1)
