import ChecklistFrames
/// The catalogue as the Markdown table of Protocol/SPEC.md section 8
/// (`checklist-conformance --markdown` prints it; a test checks that the
/// SPEC holds exactly this table, so the two cannot drift).
public enum CatalogueTable {
    public static let header = """
        | # | case | input | answer | connection |
        |--:|------|-------|--------|------------|
        """

    public static func markdown(_ cases: [ConformanceCase]) -> String {
        var lines = [header]
        var group: ConformanceCase.Group?
        for (index, testCase) in cases.enumerated() {
            if testCase.group != group {
                group = testCase.group
                lines.append("| | **\(testCase.group.rawValue)** | | | |")
            }
            lines.append(row(index + 1, testCase))
        }
        return lines.joined(separator: "\n")
    }

    static func row(_ number: Int, _ c: ConformanceCase) -> String {
        let requirement: String
        switch c.requirement {
        case .none: requirement = ""
        case .token: requirement = " (access control)"
        case .twoNamespaces: requirement = " (access control, two namespaces)"
        }
        let cells = ["\(number)", "`\(c.id)`", c.input + requirement, c.outcome.answerText, c.outcome.connection.rawValue]
        return "| " + cells.map { $0.replacingPipes }.joined(separator: " | ") + " |"
    }
}

extension String {
    fileprivate var replacingPipes: String {
        split(separator: "|", omittingEmptySubsequences: false).joined(separator: "\\|")
    }
}
