import ChecklistCommandLine
import ChecklistFaults

/// `checklist-faults`'s command line, for the parser and `--help`.
enum FaultsCommand {
    static let top = CommandSpec(
        name: "checklist-faults",
        details: """
        A Jepsen-style fault test of several `checklistd --postgres` nodes on one
        private PostgreSQL (started here, in a temporary directory, on 127.0.0.1):
        keyed writers retrying across nodes, a reader paging and reading the feed,
        subscribers moving between nodes, while a seeded nemesis injects faults.
        After the heal, every list is read from every node and a checker decides,
        from the history and those reads alone, whether every promise held.
        docs/FAULTS.md says what each check means.
        """,
        options: [
            .value("--seed", "N", "the seed of every random choice (default: random; printed)"),
            .value("--seconds", "S", "how long the workload and the faults run (default 60)"),
            .value("--nodes", "N", "checklistd nodes (default 3)"),
            .value("--faults", "KINDS", "comma-separated, or all, or none (default all):\n"
                   + FaultKind.allCases.map { "\($0.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)) \($0.summary)" }
                   .joined(separator: "\n")),
            .value("--writers", "N", "keyed writers (default 6, at most 99)"),
            .value("--lists", "N", "shared lists (default 4)"),
            .value("--subscribers", "N", "subscribers moving between nodes (default 2)"),
            .value("--statement-timeout", "S", "every node's --postgres-statement-timeout (default 5)"),
            .flag("--json", "one JSON object instead of the table"),
            .value("--details", "N", "violations shown per kind in the table (default 10)"),
            .value("--history", "FILE", "also write the whole history there, one event a line"),
        ],
        epilogue: """
        Needs PostgreSQL's programs (/usr/lib/postgresql/*/bin or $CHECKLIST_PG_BINDIR)
        and the checklistd built next to this program (or $CHECKLISTS_BIN_DIR).
        Exits 0 when no promise was broken, 1 when one was, 2 on a bad option, 3
        when the harness could not run.
        """)
}
