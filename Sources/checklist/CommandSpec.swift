import ChecklistCommandLine

/// What the CLI knows about each command: its arguments, its options and its
/// help. The parser (ChecklistCommandLine), the usage lines and the help
/// texts are all built from this one table, so the help cannot drift from
/// what is accepted.
enum Commands {
    static let all: [CommandSpec] = [
        command(name: "lists", arguments: [], options: [],
                summary: "show all lists with their counts",
                details: "Shows every list: id, name, icon and the apps' subtitle\n(\"(No Items)\", \"All Done!\" or \"N Remaining\").",
                json: "[{\"id\", \"name\", \"icon\", \"itemCount\", \"uncheckedCount\", \"revision\"}, ...]"),
        command(name: "create", arguments: ["NAME"],
                options: [option(name: "--icon", value: "ICON", help: "the list's icon (default \"No Icon\")")],
                summary: "create a list",
                details: "Creates a list named NAME (not empty) and prints it.",
                json: "{\"id\", \"name\", \"icon\", \"itemCount\", \"uncheckedCount\", \"revision\"}"),
        command(name: "rename", arguments: ["LIST", "NAME"], options: [],
                summary: "rename a list",
                details: "Gives LIST the name NAME (not empty) and prints the list.",
                json: "{\"id\", \"name\", \"icon\", \"itemCount\", \"uncheckedCount\", \"revision\"}"),
        command(name: "icon", arguments: ["LIST", "ICON"], options: [],
                summary: "change a list's icon",
                details: "Gives LIST the icon ICON and prints the list. The apps ship \"No Icon\", \"Appointments\",\n\"Birthdays\", \"Chores\", \"Drinks\", \"Folder\", \"Groceries\", \"Inbox\", \"Photos\" and \"Trips\";\nany short string is accepted.",
                json: "{\"id\", \"name\", \"icon\", \"itemCount\", \"uncheckedCount\", \"revision\"}"),
        command(name: "delete", arguments: ["LIST"], options: [],
                summary: "delete a list and all its items",
                details: "Deletes LIST with all its items.",
                json: "{\"id\", \"revision\"} (the revision the deletion was committed as)"),
        command(name: "show", arguments: ["LIST"],
                options: [option(name: "--offset", value: "N", help: "first row to show, counted after the filter (default 0)"),
                          option(name: "--limit", value: "N", help: "rows to show, at least 1 (default 50)"),
                          option(name: "--filter", value: "all|checked|unchecked", help: "which rows count (default all)")],
                summary: "show a list's items",
                details: "Shows the list and a page of its rows: the row's index (counted after the filter),\nitem id, check mark, text, due date and price.",
                json: "{\"list\": {...as in lists...}, \"total\", \"offset\",\n      \"items\": [{\"id\", \"index\", \"text\", \"checked\", \"due\", \"remind\", \"price\"}, ...]}\n      (due \"YYYY-MM-DD\" or null, price in minor units or null)"),
        command(name: "add", arguments: ["LIST", "TEXT"],
                options: [option(name: "--at", value: "INDEX", help: "insert as row INDEX (0 = first; default: at the end)"),
                          option(name: "--due", value: "YYYY-MM-DD", help: "due date (stored as midnight UTC)"),
                          option(name: "--price", value: "AMOUNT", help: "price, e.g. 3.50 (stored as 350 minor units)")],
                summary: "add an item",
                details: "Adds an unchecked item with TEXT to LIST and prints the new item's id.",
                json: "{\"revision\", \"ids\": [new item id]}"),
        command(name: "check", arguments: ["LIST", "ITEM"], options: [],
                summary: "set an item's check mark",
                details: "Sets the check mark of item ITEM in LIST.",
                json: "{\"revision\", \"ids\": []}"),
        command(name: "uncheck", arguments: ["LIST", "ITEM"], options: [],
                summary: "clear an item's check mark",
                details: "Clears the check mark of item ITEM in LIST.",
                json: "{\"revision\", \"ids\": []}"),
        command(name: "toggle", arguments: ["LIST", "ITEM"], options: [],
                summary: "flip an item's check mark",
                details: "Flips the check mark of item ITEM in LIST.",
                json: "{\"revision\", \"ids\": []}"),
        command(name: "edit", arguments: ["LIST", "ITEM", "TEXT"], options: [],
                summary: "replace an item's text",
                details: "Replaces the text of item ITEM in LIST with TEXT.",
                json: "{\"revision\", \"ids\": []}"),
        command(name: "remove", arguments: ["LIST", "ITEM"], options: [],
                summary: "delete an item",
                details: "Deletes item ITEM from LIST.",
                json: "{\"revision\", \"ids\": []}"),
        command(name: "move", arguments: ["LIST", "ITEM", "INDEX"], options: [],
                summary: "move an item to another row",
                details: "Moves item ITEM of LIST so that it ends at row INDEX among all rows (0 = first).",
                json: "{\"revision\", \"ids\": []}"),
        command(name: "ping", arguments: [], options: [],
                summary: "measure the round trip to the server",
                details: "Connects, sends one PING and prints its round-trip time (the connection setup is\nnot counted).",
                json: "{\"ok\": true, \"ms\"}"),
        command(name: "stats", arguments: [],
                options: [option(name: "--usage", value: "",
                                 help: "also show what your namespace holds (lists, items, bytes) and its quotas")],
                summary: "show the server's operational figures",
                details: "Asks the server for its figures (STATS): connections, requests and errors by\nmessage type and error code, bytes in and out, request latency percentiles,\nstore sizes, and the status of its log and snapshot when it keeps them.\nWith --usage, also the lists, items and bytes (names, icons, texts and keys) of\nyour own namespace, the one your token names, beside the server's quotas.",
                json: "{\"uptimeSeconds\", \"connections\": {\"open\", \"total\", \"rejected\", \"idleClosed\",\n      \"droppedForOutput\"}, \"readPauses\", \"inFlightPauses\", \"bytesIn\", \"bytesOut\",\n      \"requests\": [{\"type\", \"name\", \"requests\", \"errors\"}, ...], \"errors\": [{\"code\", \"name\", \"count\"}, ...],\n      \"latencyMicros\": {\"count\", \"p50\", \"p90\", \"p99\", \"p999\", \"max\"}, \"lists\", \"items\",\n      \"log\": {\"lastLSN\", \"durableLSN\", \"segments\", \"failed\"} or null,\n      \"snapshot\": {\"lsn\", \"time\", \"bytes\"} or null,\n      \"sync\": {\"subscribers\", \"changesPublished\", \"pushesDelivered\", \"subscribersDropped\",\n      \"retainedChanges\", \"retainedBytes\"} or null,\n      \"usage\": {\"lists\", \"items\", \"bytes\", \"quotas\": {\"lists\", \"items\", \"bytes\"}} (with --usage;\n      a quota not set is null; usage is null when the server does not report it)}"),
        command(name: "watch", arguments: ["[LIST]..."],
                options: [option(name: "--from", value: "REV", help: "first print the changes after revision REV (one LIST only)"),
                          option(name: "--count", value: "N", help: "exit after printing N changes")],
                summary: "print changes as they happen",
                details: "Prints every change of the LISTs (of every list when none is named) as it is\ncommitted, one line each, flushed at once. Reconnects and resumes where it was when\nthe connection is lost. Runs until interrupted, until --count changes were printed,\nor until every LIST is deleted.",
                json: "one object per line: {\"list\", \"revision\", \"kind\", \"ops\": [...]} (kind patched,\n      created, updated, deleted, omitted or resync; ops as applied, e.g. {\"op\": \"INSERT\",\n      \"id\", \"index\", \"text\", ...}; \"name\", \"icon\" for created and updated)"),
        command(name: "export", arguments: ["FILE"],
                options: [option(name: "--list", value: "LIST", repeats: true, help: "export this list only; repeat for several (default: every list)"),
                          option(name: "--format", value: "snapshot|json|plist|keyed-archive",
                                help: "snapshot (gzip, the default), JSON, the Checklists app's Checklists.plist,\n"
                                    + "or the Shopping List app's items.plist (one list)")],
                summary: "save lists to a file",
                details: "Saves every list (or the --list ones) with all their items to FILE ('-' for standard\noutput): a snapshot by default (Protocol/SNAPSHOT.md; 'gzip -t FILE' checks it), or JSON,\nor the iOS apps' files: Checklists.plist as PropertyListEncoder writes it, or items.plist,\nthe Shopping List app's keyed archive of one list (uuid, name, price, inShoppingList).\nThe lists are saved as they were at one instant. Shows a progress bar on a terminal, otherwise a line now and then.",
                json: "{\"file\", \"format\", \"lists\", \"items\", \"rawBytes\", \"compressedBytes\", \"bytesWritten\", \"seconds\"}\n      (rawBytes and compressedBytes: the snapshot as the server sent it)"),
        command(name: "import", arguments: ["FILE"],
                options: [option(name: "--replace", value: "", help: "delete every list the file does not hold (default: merge)"),
                          option(name: "--name", value: "NAME",
                                help: "name of the list made from a file of items only (default: the file's name)")],
                summary: "load lists from a file",
                details: "Loads the lists of FILE ('-' for standard input) into the server, all of them or none:\na snapshot, our JSON, or the iOS apps' files (Checklists.plist, XML, binary or a keyed\narchive; the Shopping List app's items.plist and seed.plist), told apart by their first\nbytes. A file of items only (no lists) is one list, named by --name or after the file.\nJSON is streamed (any size, little memory); property lists are read whole (up to 1 GiB). A list whose id is one of yours replaces it; other lists are added\n(with a new id when theirs is taken). --replace also deletes your other lists.",
                json: "{\"file\", \"format\", \"mode\", \"lists\", \"items\", \"deleted\", \"renamed\": [{\"from\", \"to\"}, ...],\n      \"rawBytes\", \"compressedBytes\", \"seconds\"}"),
    ]

    static func named(_ name: String) -> CommandSpec? {
        all.first { $0.name == name }
    }

    /// The whole command line: the global options and every command.
    static let top = CommandSpec(
        name: "checklist",
        synopsis: ["\(Help.globalSynopsis) COMMAND [ARGUMENTS] [OPTIONS]"],
        details: "Reads and edits the checklists of a checklistd server.",
        globalOptions: [
            .value("--server", "HOST:PORT", """
                the server (default: $CHECKLIST_SERVER, else \(Help.defaultServer));
                an IPv6 host in brackets: [::1]:7420; the nodes of one
                service with commas (a:7420,b:7420), tried in turn
                """),
            .value("--token", "TOKEN", """
                the access token, for a server run with --tokens
                (default: $CHECKLIST_TOKEN; prefer the variable: other
                users can read a command line)
                """),
        ] + TLSClientOptions.specs + [
            .flag("--json", "print one JSON document, with the protocol's field names"),
        ],
        subcommands: all,
        epilogue: """
        Arguments:
          LIST    a list id (all digits) or the exact name of one list
          ITEM    an item id (the ID column of 'checklist show LIST')

        \(TLSClientOptions.environmentHelp)
        Options may come before or after the arguments. '--' ends the options, so
        a TEXT or NAME may start with '-': checklist add 3 -- "-5 degrees"

        \(Help.exitStatus)

        Run 'checklist help COMMAND' for a command's details.
        """)

    /// One command of the table: its positionals written as in the synopsis
    /// (`LIST`, `[LIST]...`), its help's end made of the `--json` form and the exit status.
    private static func command(name: String, arguments: [String], options: [OptionSpec], summary: String,
                                details: String, json: String) -> CommandSpec {
        let positionals = arguments.map { text in
            text.hasSuffix("...") ? Positional(String(text.dropFirst().dropLast(4)), repeats: true)
                : text.hasPrefix("[") ? Positional(String(text.dropFirst().dropLast()), optional: true) : Positional(text)
        }
        var epilogue = [String]()
        if arguments.contains("LIST") || arguments.contains("[LIST]...") {
            epilogue.append("LIST is a list id (all digits) or the exact name of one list.")
        }
        epilogue += ["With --json: " + json, Help.exitStatus]
        return CommandSpec(name: name, summary: summary, details: details, positionals: positionals, options: options,
                           epilogue: epilogue.joined(separator: "\n\n"))
    }

    /// A command's option: a flag when `value` is empty.
    private static func option(name: String, value: String, repeats: Bool = false, help: String) -> OptionSpec {
        value.isEmpty ? .flag(name, help) : repeats ? .repeated(name, value, help) : .value(name, value, help)
    }
}
