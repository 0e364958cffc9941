import ChecklistTesting
import Foundation
import Testing

/// The web app in headless Chromium, driven by Selenium (Tests/Browser/
/// browser_test.py) against the built checklistd's web port: the demo lists
/// with their counts, a million-row list scrolled to its middle and end with
/// a fixed pool of row elements, a check seen in another tab within a
/// second, the server killed and restarted with edits made offline applied
/// once (and kept across a reload), a bad token refused. Screenshots go to
/// .build/screenshots. Skipped, saying why, only when Chromium, chromedriver
/// or selenium is missing (.ci/run installs them).
@Suite(.timeLimit(.minutes(5))) struct BrowserTests {
    static let script = JavaScriptClientTests.repository.appendingPathComponent("Tests/Browser/browser_test.py").path

    /// `python3` from PATH (where pip put selenium), else Debian's.
    static let python: String = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/python3" }
            .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/python3"
    }()

    /// Why the browser tests cannot run here, or nil.
    static let missing: String? = {
        for path in ["/usr/bin/chromium", "/usr/bin/chromedriver"] where !FileManager.default.isExecutableFile(atPath: path) {
            return "\(path) is missing (apt-get install chromium chromium-driver): the browser tests are skipped"
        }
        let probe = try? ProcessRunner.run(executable: python, arguments: ["-c", "import selenium"],
                                           environment: ProcessInfo.processInfo.environment, timeout: .seconds(30))
        return probe?.status == 0 ? nil : "python3 cannot import selenium (pip install selenium): the browser tests are skipped"
    }()

    @Test(.enabled(if: missing == nil, "\(missing ?? "")"))
    func webAppInHeadlessChromium() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["CHECKLISTD"] = try ProductLocator.path(of: "checklistd")
        environment["CHECKLIST"] = try ProductLocator.path(of: "checklist")
        environment["SE_AVOID_STATS"] = "true"
        environment["SCREENSHOTS"] = JavaScriptClientTests.repository.appendingPathComponent(".build/screenshots").path
        let result = try ProcessRunner.run(executable: Self.python, arguments: [Self.script],
                                           environment: environment, timeout: .seconds(240))
        print(result.stdout)
        #expect(result.status == 0, "\(Self.script) failed:\n\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("browser tests passed"), "\(result.stdout)\n\(result.stderr)")
    }
}
