import ChecklistClient

/// The help texts, built from `Commands.all`.
enum Help {
    static let defaultServer = "127.0.0.1:7420"
    static let globalSynopsis = "checklist [--server HOST:PORT[,HOST:PORT...]] [--token TOKEN] [--tls ...] [--json]"

    static var overview: String {
        let width = 34
        var lines = [
            "usage: \(globalSynopsis) COMMAND [ARGUMENTS] [OPTIONS]",
            "",
            "Reads and edits the checklists of a checklistd server.",
            "",
            "Commands:",
        ]
        for spec in Commands.all {
            let synopsis = spec.synopsis
            if synopsis.count < width {
                lines.append("  " + synopsis + String(repeating: " ", count: width - synopsis.count) + spec.summary)
            } else {
                lines.append("  " + synopsis)
                lines.append("  " + String(repeating: " ", count: width) + spec.summary)
            }
        }
        lines += [
            "",
            "Arguments:",
            "  LIST    a list id (all digits) or the exact name of one list",
            "  ITEM    an item id (the ID column of 'checklist show LIST')",
            "",
            "Global options:",
            "  --server HOST:PORT  the server (default: $CHECKLIST_SERVER, else \(defaultServer));",
            "                      an IPv6 host in brackets: [::1]:7420; the nodes of one",
            "                      service with commas (a:7420,b:7420), tried in turn",
            "  --token TOKEN       the access token, for a server run with --tokens",
            "                      (default: $CHECKLIST_TOKEN; prefer the variable: other",
            "                      users can read a command line)",
        ] + TLSClientOptions.helpLines(width: 20, environment: true) + [
            "  --json              print one JSON document, with the protocol's field names",
            "  -h, --help          show this help; after a command, that command's help",
            "",
            "Options may come before or after the arguments. '--' ends the options, so",
            "a TEXT or NAME may start with '-': checklist add 3 -- \"-5 degrees\"",
            "",
            exitStatus,
            "",
            "Run 'checklist help COMMAND' for a command's details.",
        ]
        return lines.joined(separator: "\n")
    }

    static func command(_ spec: CommandSpec) -> String {
        var lines = ["usage: \(globalSynopsis) \(spec.synopsis)", "", spec.details]
        if !spec.options.isEmpty {
            lines += ["", "Options:"]
            let width = spec.options.map { $0.name.count + 1 + $0.value.count }.max()! + 2
            for option in spec.options {
                let left = option.isFlag ? option.name : "\(option.name) \(option.value)"
                lines.append("  " + left + String(repeating: " ", count: width - left.count) + option.help)
            }
        }
        if spec.arguments.contains("LIST") {
            lines += ["", "LIST is a list id (all digits) or the exact name of one list."]
        }
        if spec.name != "help" {
            lines += ["", "With --json: " + spec.json]
        }
        lines += ["", exitStatus]
        return lines.joined(separator: "\n")
    }

    static let exitStatus = """
        Exit status: 0 success; 1 the server answered an error, or a list name matches
        no list or several (message "checklist: CODE: text" on stderr); 2 bad usage;
        3 the server cannot be reached, the connection was lost, or TLS failed (the
        server's certificate did not verify, or ours was refused).
        """

    /// The short form shown after a usage error.
    static func usage(_ spec: CommandSpec?) -> String {
        guard let spec else { return "usage: \(globalSynopsis) COMMAND ...\nRun 'checklist help' for the commands." }
        return "usage: \(globalSynopsis) \(spec.synopsis)\nRun 'checklist help \(spec.name)' for details."
    }
}
