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

struct Options {
    var address: String?
    var token = getenv("CHECKLIST_TOKEN").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    var secondToken: String?
    var idle: Duration = .seconds(2)
    var timeout: Duration = .seconds(10)
    var only: Set<String>?

    init(_ arguments: [String]) {
        var rest = arguments[...]
        func value(_ flag: String) -> String {
            guard let v = rest.popFirst() else { fail("\(flag) needs a value") }
            return v
        }
        func seconds(_ flag: String) -> Duration {
            let text = value(flag)
            guard let n = Double(text), n >= 0 else { fail("\(flag): '\(text)' is not a number of seconds") }
            return .milliseconds(Int64(n * 1000))
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "-h", "--help": print(usage); exit(0)
            case "--list":
                for c in Catalogue.all { print("\(c.id)\t\(c.group.rawValue)\t\(c.input)") }
                exit(0)
            case "--markdown": print(CatalogueTable.markdown(Catalogue.badInputs)); exit(0)
            case "--token": token = value(argument)
            case "--second-token": secondToken = value(argument)
            case "--idle": idle = seconds(argument)
            case "--timeout": timeout = seconds(argument)
            case "--only": only = Set(value(argument).split(separator: ",").map(String.init))
            default:
                guard !argument.hasPrefix("-"), address == nil else { fail("unexpected argument '\(argument)'") }
                address = argument
            }
        }
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let (token, secondToken, idle, timeout) = (options.token, options.secondToken, options.idle, options.timeout)

guard let address = options.address, let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
    fail("give the server as HOST:PORT")
}
var host = String(address[..<colon])
if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }

var cases = Catalogue.all
if let only = options.only {
    let unknown = only.subtracting(cases.map(\.id))
    guard unknown.isEmpty else { fail("no case named \(unknown.sorted().joined(separator: ", ")) (see --list)") }
    cases = cases.filter { only.contains($0.id) }
}

let target = Target(host: host, port: port, token: token, secondToken: secondToken, idle: idle, timeout: timeout)
print("checklist-conformance: \(cases.count) cases against \(address)" + (token == nil ? " (no token)" : " (with a token)"))
let results = ConformanceRunner.runAll(cases, against: target) { result in print(result.line) }
let failed = results.filter { $0.status == .failed }.count
let skipped = results.filter { $0.status == .skipped }.count
print("\(results.count - failed - skipped) passed, \(failed) failed, \(skipped) skipped")
exit(failed == 0 ? 0 : 1)
