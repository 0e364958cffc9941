import ChecklistClient
import ChecklistCommandLine
#if canImport(Glibc)
import Glibc
#endif

/// Exit statuses (see `Help.exitStatus`).
enum ExitStatus {
    static let success: Int32 = 0
    static let serverError: Int32 = 1
    static let usage: Int32 = UsageError.exitStatus
    static let unreachable: Int32 = 3
}

/// Writes a line to standard error (unbuffered, straight to descriptor 2).
func printError(_ text: String) {
    writeLine(text, to: 2)
}

/// Writes `text` and a newline straight to descriptor `fd` (no stdio
/// buffering), so a pipe sees the line as soon as it is written.
func writeLine(_ text: String, to fd: Int32) {
    CommandLineTool.write(text + "\n", to: fd)
}

/// Parses the command line, runs the command and returns the exit status.
func runCLI(_ arguments: [String]) async -> Int32 {
    let parsed: ParsedCommandLine
    let command: Command
    let servers: [ServerAddress]
    let tls: TLSClientConfiguration?
    do throws(UsageError) {
        parsed = try CommandLineParser.parse(arguments, Commands.top)
        if parsed.helpRequested {
            print(parsed.helpText)
            return ExitStatus.success
        }
        (command, servers) = try checkedCommand(parsed)
        tls = try checkedTLS(parsed, environment: TLSClientOptions.processEnvironment(), loadFiles: true)
    } catch {
        printError("checklist: \(error.message)\n" + error.usage)
        return ExitStatus.usage
    }
    do {
        let token = (parsed.string("--token") ?? getenv("CHECKLIST_TOKEN").map { String(cString: $0) }).flatMap { $0.isEmpty ? nil : $0 }
        let json = parsed.flag("--json")
        if case .watch(let lists, let from, let count) = command {
            let watch = Watch(servers: servers, token: token, tls: tls, json: json)
            return await watch.run(lists, from: from, count: count)
        }
        print(try await runOnce(command, servers: servers, token: token, tls: tls, json: json))
        return ExitStatus.success
    } catch {
        return reportFailure(error)
    }
}

/// The command line's arguments: a shorthand for tests.
func parse(_ arguments: [String]) throws(UsageError) -> ParsedCommandLine {
    try CommandLineParser.parse(arguments, Commands.top)
}

/// The command to run and the servers to try, in order (`--server`, else
/// `$CHECKLIST_SERVER`, else the default), checked without connecting.
func checkedCommand(_ parsed: ParsedCommandLine) throws(UsageError) -> (Command, [ServerAddress]) {
    let command = try Command(parsed)
    let environment = getenv("CHECKLIST_SERVER").map { String(cString: $0) }
    let address = parsed.string("--server") ?? environment ?? Help.defaultServer
    guard let servers = ServerAddress.list(parsing: address) else {
        let source = parsed.has("--server") ? "--server" : "CHECKLIST_SERVER"
        throw parsed.error("bad \(source) '\(address)': expected HOST:PORT[,HOST:PORT...], "
                           + "e.g. 127.0.0.1:7420 or [::1]:7420")
    }
    return (command, servers)
}

/// The TLS configuration of `--tls` and the `--tls-*` options over the
/// `CHECKLIST_TLS*` variables of `environment`, nil for plaintext. With
/// `loadFiles`, the files are read once, so a missing or bad one is a
/// usage error before connecting.
func checkedTLS(_ parsed: ParsedCommandLine, environment: [String: String],
                loadFiles: Bool = false) throws(UsageError) -> TLSClientConfiguration? {
    do throws(UsageError) {
        let options = try TLSClientOptions(environment: environment).overridden(by: TLSClientOptions(parsed))
        return loadFiles ? try options.checkedConfiguration() : try options.configuration()
    } catch {
        throw error.withUsage(parsed.usage)
    }
}

/// Connects (to the first of `servers` that answers), runs `command` and
/// closes the connection; returns what to print.
func runOnce(_ command: Command, servers: [ServerAddress], token: String?, tls: TLSClientConfiguration?,
             json: Bool) async throws -> String {
    let connection = try await ChecklistConnection.connect(servers: servers, clientName: "checklist-cli/1.0",
                                                           token: token, timeout: .seconds(5), requestTimeout: .seconds(30),
                                                           tls: tls)
    do {
        let output = try await Runner(connection: connection, json: json).run(command)
        await connection.close()
        return output
    } catch {
        await connection.close()
        throw error
    }
}

/// Says on standard error why a command failed; returns its exit status.
func reportFailure(_ error: any Error) -> Int32 {
    switch error {
    case let error as ClientError:
        switch error.code {
        case .server:
            printError("checklist: \(error)")
            return ExitStatus.serverError
        case .connectionFailed, .timeout, .connectionClosed, .tlsFailed, .certificateRejected:
            // A refused certificate or a failed TLS handshake: the server
            // was not reached as asked (there is no plaintext fallback).
            printError("checklist: \(error.message)")
            return ExitStatus.unreachable
        default:
            printError("checklist: \(error.code): \(error.message)")
            return ExitStatus.serverError
        }
    case let error as LookupError:
        printError("checklist: \(error.message)")
        return ExitStatus.serverError
    default:
        printError("checklist: \(error)")
        return ExitStatus.serverError
    }
}

exit(await runCLI(Array(CommandLine.arguments.dropFirst())))
