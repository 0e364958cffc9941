@testable import checklist_bench
import Testing

/// `checklist-bench`'s `--key value` / `--flag` parser and its checks.
@Suite(.timeLimit(.minutes(10)))
struct BenchArgumentsTests {
    @Test func valuesFlagsAndDefaults() throws {
        let args = try BenchArguments(["--items", "500", "--json", "--seconds", "2.5", "--server", "h:1"], flagNames: ["json"])
        #expect(args.flag("json") && !args.flag("other"))
        #expect(try args.int("items", default: 1, min: 1) == 500)
        #expect(try args.int("connections", default: 50) == 50)
        #expect(try args.double("seconds", default: 10) == 2.5)
        #expect(args.string("server") == "h:1" && args.string("pattern") == nil)
        try args.check(allowed: ["items", "json", "seconds", "server"])
    }

    @Test func badArgumentsAreUsageErrors() throws {
        func message(_ body: () throws -> Void) -> String? {
            do { try body(); return nil } catch { return (error as? BenchArguments.UsageError)?.description }
        }
        #expect(message { _ = try BenchArguments(["items"], flagNames: []) } == "unexpected argument 'items'")
        #expect(message { _ = try BenchArguments(["--items"], flagNames: []) } == "--items needs a value")
        let args = try BenchArguments(["--items", "0", "--seconds", "-1", "--typo", "x"], flagNames: [])
        #expect(message { _ = try args.int("items", default: 1, min: 1) } == "--items: '0' is not a whole number >= 1")
        #expect(message { _ = try args.double("seconds", default: 1) } == "--seconds: '-1' is not a positive number")
        #expect(message { try args.check(allowed: ["items", "seconds"]) } == "unknown option --typo")
    }
}
