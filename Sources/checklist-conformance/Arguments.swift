import ChecklistTLS

/// `checklist-conformance`'s command line, parsed without side effects:
/// what to do, or the usage error to report (exit status 2).
struct Arguments: Equatable {
    /// What the command line asks for.
    enum Action: Equatable {
        case help
        /// Print the case ids and inputs.
        case list
        /// Print the catalogue as the SPEC.md table.
        case markdown
        /// Run the cases against `host`:`port`.
        case run(host: String, port: UInt16)
    }

    /// A bad command line; `message` says what is wrong.
    struct UsageError: Error, Equatable {
        var message: String
    }

    var action: Action
    /// `HOST:PORT` as given (for the report's first line).
    var address: String?
    var token: String?
    var secondToken: String?
    var idle: Duration = .seconds(2)
    var timeout: Duration = .seconds(10)
    var only: Set<String>?
    /// `--tls` and the `--tls-*` options over the `CHECKLIST_TLS*` variables.
    var tls = TLSClientOptions()

    /// Parses `arguments` (without the program name); `environmentToken`
    /// is `$CHECKLIST_TOKEN`, which `--token` overrides; `environment`
    /// holds the `CHECKLIST_TLS*` variables, which the `--tls*` options override.
    init(_ arguments: [String], environmentToken: String?, environment: [String: String] = [:]) throws(UsageError) {
        action = .help
        token = environmentToken.flatMap { $0.isEmpty ? nil : $0 }
        var flags = TLSClientOptions()
        do throws(TLSClientOptions.UsageError) {
            tls = try TLSClientOptions(environment: environment)
        } catch {
            throw UsageError(message: error.message)
        }
        var rest = arguments[...]
        func value(_ flag: String) throws(UsageError) -> String {
            guard let v = rest.popFirst() else { throw UsageError(message: "\(flag) needs a value") }
            return v
        }
        func seconds(_ flag: String) throws(UsageError) -> Duration {
            let text = try value(flag)
            guard let n = Double(text), n >= 0 else { throw UsageError(message: "\(flag): '\(text)' is not a number of seconds") }
            return .milliseconds(Int64(n * 1000))
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "-h", "--help": action = .help; return
            case "--list": action = .list; return
            case "--markdown": action = .markdown; return
            case "--token": token = try value(argument)
            case "--second-token": secondToken = try value(argument)
            case "--idle": idle = try seconds(argument)
            case "--timeout": timeout = try seconds(argument)
            case "--only": only = Set(try value(argument).split(separator: ",").map(String.init))
            case TLSClientOptions.flag: _ = flags.set(argument, nil)
            case _ where TLSClientOptions.valueOptions.contains(argument): _ = flags.set(argument, try value(argument))
            default:
                guard !argument.hasPrefix("-"), address == nil else { throw UsageError(message: "unexpected argument '\(argument)'") }
                address = argument
            }
        }
        guard let address, let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
            throw UsageError(message: "give the server as HOST:PORT")
        }
        tls = tls.overridden(by: flags)
        do throws(TLSClientOptions.UsageError) {
            _ = try tls.configuration()
        } catch {
            throw UsageError(message: error.message)
        }
        var host = String(address[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        action = .run(host: host, port: port)
    }
}
