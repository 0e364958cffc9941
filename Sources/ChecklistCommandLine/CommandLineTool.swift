#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a tool ends on its command line: help on standard output and exit
/// status 0, bad usage on standard error and `UsageError.exitStatus`.
public enum CommandLineTool {
    /// Parses `arguments` against `spec`; prints the help and exits 0 when
    /// it was asked for, reports a usage error and exits on bad usage.
    public static func parseOrExit(_ arguments: [String], _ spec: CommandSpec) -> ParsedCommandLine {
        do throws(UsageError) {
            let parsed = try CommandLineParser.parse(arguments, spec)
            if parsed.helpRequested { printHelpAndExit(parsed.helpText) }
            return parsed
        } catch {
            fail(error, program: spec.name)
        }
    }

    /// Prints `text` on standard output and exits 0.
    public static func printHelpAndExit(_ text: String) -> Never {
        write(text + "\n", to: 1)
        exit(0)
    }

    /// Prints `program: message` and the usage on standard error and exits
    /// with `UsageError.exitStatus`.
    public static func fail(_ error: UsageError, program: String) -> Never {
        write("\(program): \(error.message)\n" + (error.usage.isEmpty ? "" : error.usage + "\n"), to: 2)
        exit(UsageError.exitStatus)
    }

    /// Writes `text` whole to descriptor `fd`, unbuffered.
    public static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                #if canImport(Glibc)
                let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                #else
                let n = Darwin.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                #endif
                if n <= 0 { if n < 0 && errno == EINTR { continue } else { return } }
                offset += n
            }
        }
    }
}
