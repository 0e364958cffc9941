import ChecklistConformance
#if canImport(Glibc)
import Glibc
#endif

/// checklist-conformance HOST:PORT [options]: runs the catalogue of
/// Protocol/SPEC.md section 8 and a happy path through every message
/// against any server that claims to speak the protocol.
let usage = """
    usage: checklist-conformance HOST:PORT [--token T] [--second-token U] [--idle SECONDS]
                                 [--timeout SECONDS] [--only CASE[,CASE...]]
           checklist-conformance --list | --markdown

    Runs every case of the bad-input catalogue (Protocol/SPEC.md section 8) and a
    happy path through every message against the server, printing PASS, FAIL or
    SKIP per case. Each case also checks that a second connection still works and
    that the namespace's data did not change. Exit status: 0 when no case failed,
    1 when one did, 2 bad usage.

      --token T          the token of the namespace to test (servers with access
                         control); also read from $CHECKLIST_TOKEN
      --second-token U   a token of another namespace: runs the isolation case
      --idle SECONDS     how long the idle cases stay silent (default 2)
      --timeout SECONDS  the longest an answer may take (default 10)
      --only CASES       run only these cases (comma-separated ids)
      --list             print the case ids and inputs, run nothing
      --markdown         print the catalogue as the SPEC.md table, run nothing

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
                              environmentToken: getenv("CHECKLIST_TOKEN").map { String(cString: $0) })
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

let target = Target(host: host, port: port, token: token, secondToken: secondToken, idle: idle, timeout: timeout)
print("checklist-conformance: \(cases.count) cases against \(arguments.address ?? "")" + (token == nil ? " (no token)" : " (with a token)"))
let results = ConformanceRunner.runAll(cases, against: target) { result in print(result.line) }
let failed = results.filter { $0.status == .failed }.count
let skipped = results.filter { $0.status == .skipped }.count
print("\(results.count - failed - skipped) passed, \(failed) failed, \(skipped) skipped")
exit(failed == 0 ? 0 : 1)
