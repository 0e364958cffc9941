import ChecklistConformance
import ChecklistTLS
import ChecklistTesting
#if canImport(Glibc)
import Glibc
#endif

/// checklist-conformance HOST:PORT [options]: runs the catalogue of
/// Protocol/SPEC.md section 8 and a happy path through every message
/// against any server that claims to speak the protocol.
let usage = """
    usage: checklist-conformance HOST:PORT [--token T] [--second-token U] [--idle SECONDS]
                                 [--timeout SECONDS] [--only CASE[,CASE...]]
                                 [--tls] [--tls-ca FILE] [--tls-server-name NAME]
                                 [--tls-cert FILE --tls-key FILE]
           checklist-conformance --list | --markdown

    Runs every case of the bad-input catalogue (Protocol/SPEC.md section 8) and a
    happy path through every message against the server, printing PASS, FAIL or
    SKIP per case. Each case also checks that a second connection still works and
    that the namespace's data did not change. With --tls every connection speaks
    TLS, and the whole catalogue runs inside it (a half-close is close_notify and
    then the FIN; a reset sends no close_notify). Exit status: 0 when no case
    failed, 1 when one did, 2 bad usage, 3 with --tls when the first TLS handshake
    fails (e.g. the server's certificate does not verify): then no case runs.

      --token T          the token of the namespace to test (servers with access
                         control); also read from $CHECKLIST_TOKEN
      --second-token U   a token of another namespace: runs the isolation case
      --idle SECONDS     how long the idle cases stay silent (default 2)
      --timeout SECONDS  the longest an answer may take (default 10)
      --only CASES       run only these cases (comma-separated ids)
      --list             print the case ids and inputs, run nothing
      --markdown         print the catalogue as the SPEC.md table, run nothing
    \(TLSClientOptions.helpLines(width: 19, environment: true).joined(separator: "\n"))

    Run it against a server nobody else uses: it creates and deletes lists of
    its own, and any other change to the namespace fails the data checks.
    """

func fail(_ message: String) -> Never {
    var text = "checklist-conformance: \(message)\n\(usage)\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(2)
}

let arguments: Arguments
do throws(Arguments.UsageError) {
    arguments = try Arguments(Array(CommandLine.arguments.dropFirst()),
                              environmentToken: getenv("CHECKLIST_TOKEN").map { String(cString: $0) },
                              environment: TLSClientOptions.processEnvironment())
} catch {
    fail(error.message)
}

let host: String, port: UInt16
switch arguments.action {
case .help:
    print(usage)
    exit(0)
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
