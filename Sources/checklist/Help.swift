import ChecklistCommandLine

/// The help texts, built from `Commands.top` by ChecklistCommandLine.
enum Help {
    static let defaultServer = "127.0.0.1:7420"
    static let globalSynopsis = "checklist [--server HOST:PORT[,HOST:PORT...]] [--token TOKEN] [--tls ...] [--json]"

    /// `checklist --help`.
    static var overview: String { HelpText.help(Commands.top, nil) }

    /// `checklist help COMMAND`, `checklist COMMAND --help`.
    static func command(_ spec: CommandSpec) -> String { HelpText.help(Commands.top, spec) }

    static let exitStatus = """
        Exit status: 0 success; 1 the server answered an error, or a list name matches
        no list or several (message "checklist: CODE: text" on stderr); 2 bad usage;
        3 the server cannot be reached, the connection was lost, or TLS failed (the
        server's certificate did not verify, or ours was refused).
        """
}
