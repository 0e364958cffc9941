/// What the CLI knows about each command: its arguments, its options and its
/// help. The parser, the usage lines and the help texts are all built from
/// this one table, so the help cannot drift from what is accepted.
struct CommandSpec {
    struct Option {
        let name: String
        /// The value's placeholder; empty for a flag, which takes none.
        let value: String
        let help: String

        var isFlag: Bool { value.isEmpty }
    }

    let name: String
    let arguments: [String]
    let options: [Option]
    let summary: String
    let details: String
    let json: String

    /// `show LIST [--offset N] [--limit N] [--filter all|checked|unchecked]`
    var synopsis: String {
        ([name] + arguments + options.map { $0.isFlag ? "[\($0.name)]" : "[\($0.name) \($0.value)]" }).joined(separator: " ")
    }

    func option(named name: String) -> Option? {
        options.first { $0.name == name }
    }
}

/// The global options, accepted before or after the command.
enum GlobalOption {
    static let server = "--server"
    static let token = "--token"
    static let json = "--json"
    static let help = ["--help", "-h"]
}

enum Commands {
    static let all: [CommandSpec] = [
        CommandSpec(name: "lists", arguments: [], options: [],
                    summary: "show all lists with their counts",
                    details: "Shows every list: id, name, icon and the apps' subtitle\n(\"(No Items)\", \"All Done!\" or \"N Remaining\").",
                    json: "[{\"id\", \"name\", \"icon\", \"itemCount\", \"uncheckedCount\", \"revision\"}, ...]"),
        CommandSpec(name: "create", arguments: ["NAME"],
                    options: [.init(name: "--icon", value: "ICON", help: "the list's icon (default \"No Icon\")")],
                    summary: "create a list",
                    details: "Creates a list named NAME (not empty) and prints it.",
                    json: "{\"id\", \"name\", \"icon\", \"itemCount\", \"uncheckedCount\", \"revision\"}"),
        CommandSpec(name: "rename", arguments: ["LIST", "NAME"], options: [],
                    summary: "rename a list",
                    details: "Gives LIST the name NAME (not empty) and prints the list.",
                    json: "{\"id\", \"name\", \"icon\", \"itemCount\", \"uncheckedCount\", \"revision\"}"),
        CommandSpec(name: "icon", arguments: ["LIST", "ICON"], options: [],
                    summary: "change a list's icon",
                    details: "Gives LIST the icon ICON and prints the list. The apps ship \"No Icon\", \"Appointments\",\n\"Birthdays\", \"Chores\", \"Drinks\", \"Folder\", \"Groceries\", \"Inbox\", \"Photos\" and \"Trips\";\nany short string is accepted.",
                    json: "{\"id\", \"name\", \"icon\", \"itemCount\", \"uncheckedCount\", \"revision\"}"),
        CommandSpec(name: "delete", arguments: ["LIST"], options: [],
                    summary: "delete a list and all its items",
                    details: "Deletes LIST with all its items.",
                    json: "{\"id\", \"revision\"} (the revision the deletion was committed as)"),
        CommandSpec(name: "show", arguments: ["LIST"],
                    options: [.init(name: "--offset", value: "N", help: "first row to show, counted after the filter (default 0)"),
                              .init(name: "--limit", value: "N", help: "rows to show, at least 1 (default 50)"),
                              .init(name: "--filter", value: "all|checked|unchecked", help: "which rows count (default all)")],
                    summary: "show a list's items",
                    details: "Shows the list and a page of its rows: the row's index (counted after the filter),\nitem id, check mark, text, due date and price.",
                    json: "{\"list\": {...as in lists...}, \"total\", \"offset\",\n      \"items\": [{\"id\", \"index\", \"text\", \"checked\", \"due\", \"remind\", \"price\"}, ...]}\n      (due \"YYYY-MM-DD\" or null, price in minor units or null)"),
        CommandSpec(name: "add", arguments: ["LIST", "TEXT"],
                    options: [.init(name: "--at", value: "INDEX", help: "insert as row INDEX (0 = first; default: at the end)"),
                              .init(name: "--due", value: "YYYY-MM-DD", help: "due date (stored as midnight UTC)"),
                              .init(name: "--price", value: "AMOUNT", help: "price, e.g. 3.50 (stored as 350 minor units)")],
                    summary: "add an item",
                    details: "Adds an unchecked item with TEXT to LIST and prints the new item's id.",
                    json: "{\"revision\", \"ids\": [new item id]}"),
        CommandSpec(name: "check", arguments: ["LIST", "ITEM"], options: [],
                    summary: "set an item's check mark",
                    details: "Sets the check mark of item ITEM in LIST.",
                    json: "{\"revision\", \"ids\": []}"),
        CommandSpec(name: "uncheck", arguments: ["LIST", "ITEM"], options: [],
                    summary: "clear an item's check mark",
                    details: "Clears the check mark of item ITEM in LIST.",
                    json: "{\"revision\", \"ids\": []}"),
        CommandSpec(name: "toggle", arguments: ["LIST", "ITEM"], options: [],
                    summary: "flip an item's check mark",
                    details: "Flips the check mark of item ITEM in LIST.",
                    json: "{\"revision\", \"ids\": []}"),
        CommandSpec(name: "edit", arguments: ["LIST", "ITEM", "TEXT"], options: [],
                    summary: "replace an item's text",
                    details: "Replaces the text of item ITEM in LIST with TEXT.",
                    json: "{\"revision\", \"ids\": []}"),
        CommandSpec(name: "remove", arguments: ["LIST", "ITEM"], options: [],
                    summary: "delete an item",
                    details: "Deletes item ITEM from LIST.",
                    json: "{\"revision\", \"ids\": []}"),
        CommandSpec(name: "move", arguments: ["LIST", "ITEM", "INDEX"], options: [],
                    summary: "move an item to another row",
                    details: "Moves item ITEM of LIST so that it ends at row INDEX among all rows (0 = first).",
                    json: "{\"revision\", \"ids\": []}"),
        CommandSpec(name: "ping", arguments: [], options: [],
                    summary: "measure the round trip to the server",
                    details: "Connects, sends one PING and prints its round-trip time (the connection setup is\nnot counted).",
                    json: "{\"ok\": true, \"ms\"}"),
        CommandSpec(name: "stats", arguments: [], options: [],
                    summary: "show the server's operational figures",
                    details: "Asks the server for its figures (STATS): connections, requests and errors by\nmessage type and error code, bytes in and out, request latency percentiles,\nstore sizes, and the status of its log and snapshot when it keeps them.",
                    json: "{\"uptimeSeconds\", \"connections\": {\"open\", \"total\", \"rejected\", \"idleClosed\",\n      \"droppedForOutput\"}, \"readPauses\", \"inFlightPauses\", \"bytesIn\", \"bytesOut\",\n      \"requests\": [{\"type\", \"name\", \"requests\", \"errors\"}, ...], \"errors\": [{\"code\", \"name\", \"count\"}, ...],\n      \"latencyMicros\": {\"count\", \"p50\", \"p90\", \"p99\", \"p999\", \"max\"}, \"lists\", \"items\",\n      \"log\": {\"lastLSN\", \"durableLSN\", \"segments\", \"failed\"} or null,\n      \"snapshot\": {\"lsn\", \"time\", \"bytes\"} or null}"),
        CommandSpec(name: "watch", arguments: ["[LIST]..."],
                    options: [.init(name: "--from", value: "REV", help: "first print the changes after revision REV (one LIST only)"),
                              .init(name: "--count", value: "N", help: "exit after printing N changes")],
                    summary: "print changes as they happen",
                    details: "Prints every change of the LISTs (of every list when none is named) as it is\ncommitted, one line each, flushed at once. Reconnects and resumes where it was when\nthe connection is lost. Runs until interrupted, until --count changes were printed,\nor until every LIST is deleted.",
                    json: "one object per line: {\"list\", \"revision\", \"kind\", \"ops\": [...]} (kind patched,\n      created, updated, deleted, omitted or resync; ops as applied, e.g. {\"op\": \"INSERT\",\n      \"id\", \"index\", \"text\", ...}; \"name\", \"icon\" for created and updated)"),
        CommandSpec(name: "export", arguments: ["FILE"],
                    options: [.init(name: "--list", value: "LIST", help: "export this list only; repeat for several (default: every list)"),
                              .init(name: "--format", value: "snapshot|json|plist|keyed-archive",
                                    help: "snapshot (gzip, the default), JSON, the Checklists app's Checklists.plist,\n"
                                        + "or the Shopping List app's items.plist (one list)")],
                    summary: "save lists to a file",
                    details: "Saves every list (or the --list ones) with all their items to FILE ('-' for standard\noutput): a snapshot by default (Protocol/SNAPSHOT.md; 'gzip -t FILE' checks it), or JSON,\nor the iOS apps' files: Checklists.plist as PropertyListEncoder writes it, or items.plist,\nthe Shopping List app's keyed archive of one list (uuid, name, price, inShoppingList).\nThe lists are saved as they were at one instant. Shows a progress bar on a terminal, otherwise a line now and then.",
                    json: "{\"file\", \"format\", \"lists\", \"items\", \"rawBytes\", \"compressedBytes\", \"bytesWritten\", \"seconds\"}\n      (rawBytes and compressedBytes: the snapshot as the server sent it)"),
        CommandSpec(name: "import", arguments: ["FILE"],
                    options: [.init(name: "--replace", value: "", help: "delete every list the file does not hold (default: merge)"),
                              .init(name: "--name", value: "NAME",
                                    help: "name of the list made from a file of items only (default: the file's name)")],
                    summary: "load lists from a file",
                    details: "Loads the lists of FILE ('-' for standard input) into the server, all of them or none:\na snapshot, our JSON, or the iOS apps' files (Checklists.plist, XML, binary or a keyed\narchive; the Shopping List app's items.plist and seed.plist), told apart by their first\nbytes. A file of items only (no lists) is one list, named by --name or after the file.\nJSON is streamed (any size, little memory); property lists are read whole (up to 1 GiB). A list whose id is one of yours replaces it; other lists are added\n(with a new id when theirs is taken). --replace also deletes your other lists.",
                    json: "{\"file\", \"format\", \"mode\", \"lists\", \"items\", \"deleted\", \"renamed\": [{\"from\", \"to\"}, ...],\n      \"rawBytes\", \"compressedBytes\", \"seconds\"}"),
        CommandSpec(name: "help", arguments: ["[COMMAND]"], options: [],
                    summary: "show this help, or a command's",
                    details: "Shows the overview, or the help of COMMAND.",
                    json: "(help is always text)"),
    ]

    static func named(_ name: String) -> CommandSpec? {
        all.first { $0.name == name }
    }

    /// Every command option by name.
    static var allOptionNames: Set<String> {
        Set(all.flatMap { $0.options.map(\.name) })
    }

    /// The command options that take no value.
    static var flagOptionNames: Set<String> {
        Set(all.flatMap { $0.options.filter(\.isFlag).map(\.name) })
    }
}
