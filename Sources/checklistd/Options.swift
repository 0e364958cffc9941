import ChecklistServer

/// `checklistd`'s command line.
struct Options {
    var configuration = ServerConfiguration()
    var seedDemo = false

    static let usage = """
    usage: checklistd [options]

    Serves checklists over the Checklists binary protocol v1 (Protocol/SPEC.md).
    Prints "listening on HOST:PORT" on stdout once it accepts connections.

    options:
      --host HOST            address to bind (default 127.0.0.1)
      --port PORT            TCP port; 0 picks a free one (default 7420)
      --data-dir PATH        data directory, created if missing (default ./data)
      --threads N            event-loop threads (default: one per core)
      --max-connections N    connections open at once (default 10000)
      --max-frame BYTES      largest frame accepted (default 4194304)
      --max-page-rows N      largest GET_PAGE limit (default 1000)
      --max-text BYTES       longest text, name or icon (default 4096)
      --max-batch N          most operations in one PATCH (default 1000)
      --seed-demo            fill an empty store with the apps' demo lists
      -h, --help             show this help

    SIGINT or SIGTERM stops accepting, answers requests in flight and exits 0.
    """

    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    static func parse(_ arguments: [String]) throws -> Options? {
        var options = Options()
        var rest = arguments[...]
        func value(_ flag: String) throws -> String {
            guard let v = rest.popFirst() else { throw UsageError(description: "\(flag) needs a value") }
            return v
        }
        func number<T: FixedWidthInteger>(_ flag: String, _: T.Type, min: T = 0) throws -> T {
            let text = try value(flag)
            guard let n = T(text), n >= min else { throw UsageError(description: "\(flag): '\(text)' is not a valid number") }
            return n
        }
        while let arg = rest.popFirst() {
            switch arg {
            case "-h", "--help": return nil
            case "--host": options.configuration.host = try value(arg)
            case "--port": options.configuration.port = try number(arg, UInt16.self)
            case "--data-dir": options.configuration.dataDirectory = try value(arg)
            case "--threads": options.configuration.threads = try number(arg, Int.self, min: 1)
            case "--max-connections": options.configuration.maxConnections = try number(arg, Int.self, min: 1)
            case "--max-frame": options.configuration.limits.maxFrameBytes = try number(arg, UInt32.self, min: 1024)
            case "--max-page-rows": options.configuration.limits.maxPageRows = try number(arg, UInt32.self, min: 1)
            case "--max-text": options.configuration.limits.maxTextBytes = try number(arg, UInt32.self, min: 1)
            case "--max-batch": options.configuration.limits.maxBatchOps = try number(arg, UInt32.self, min: 1)
            case "--seed-demo": options.seedDemo = true
            default: throw UsageError(description: "unknown option '\(arg)'")
            }
        }
        return options
    }
}
