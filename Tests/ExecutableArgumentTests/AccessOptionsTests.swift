import ChecklistCommandLine
import ChecklistServer
@testable import checklistd
import Testing

/// `checklistd`'s signed-token and rate-limit options.
@Suite struct AccessOptionsTests {
    @Test func signedTokenAndRateOptionsAreApplied() throws {
        let options = try #require(try Options.parse([
            "--auth-keys", "/k.json", "--auth-issuer", "https://id.example", "--auth-audience", "checklists",
            "--auth-namespace-claim", "tenant", "--auth-leeway", "5", "--rate-limit", "20", "--rate-burst", "40",
            "--quota-lists", "10", "--quota-items", "1000", "--quota-bytes", "64KB",
        ]))
        let quotas = options.configuration.quotas
        #expect(quotas.lists == 10 && quotas.items == 1000 && quotas.bytes == 65_536)
        #expect(options.authKeysFile == "/k.json")
        let e = options.authExpectations
        #expect(e.issuer == "https://id.example" && e.audience == "checklists" && e.namespaceClaim == "tenant" && e.leewaySeconds == 5)
        #expect(options.configuration.rateLimit == RateLimiter.Settings(requestsPerSecond: 20, burst: 40))
    }

    @Test func defaults() throws {
        let options = try #require(try Options.parse(["--auth-keys", "/k.json", "--rate-limit", "2.5"]))
        #expect(options.authExpectations.namespaceClaim == "sub" && options.authExpectations.leewaySeconds == 60)
        #expect(options.configuration.rateLimit?.burst == 2.5)
        #expect(!options.configuration.quotas.isBounded)
    }

    @Test(arguments: [["--auth-issuer", "x"], ["--auth-leeway", "1"], ["--rate-burst", "3"], ["--rate-limit", "0"],
                      ["--auth-keys", "/k", "--auth-namespace-claim", ""],
                      ["--quota-bytes", "12 apples"]])
    func refusedCombinations(arguments: [String]) {
        #expect(throws: UsageError.self) { try Options.parse(arguments) }
    }
}
