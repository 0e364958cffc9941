import ChecklistCommandLine
@testable import checklistd
import Testing

/// `checklistd --cache-bytes SIZE`: sizes with units, and only with `--postgres`.
@Suite(.timeLimit(.minutes(10)))
struct CacheBytesOptionTests {
    @Test(arguments: [("67108864", 64 << 20), ("64MB", 64 << 20), ("64MiB", 64 << 20), ("2GB", 2 << 30),
                      ("512kb", 512 << 10), ("100B", 100)])
    func sizesAreParsedWithTheirUnits(text: String, bytes: Int) throws {
        let options = try #require(try Options.parse(["--postgres", "dbname=x", "--cache-bytes", text]))
        #expect(options.cacheBytes == bytes)
    }

    @Test func theDefaultIsNone() throws {
        #expect(try #require(try Options.parse(["--postgres", "dbname=x"])).cacheBytes == nil)
    }

    @Test(arguments: ["64XB", "MB", "-5", "0", "99999999999999999999GB"])
    func badSizesAreUsageErrors(text: String) {
        #expect(throws: UsageError.self) { try Options.parse(["--postgres", "dbname=x", "--cache-bytes", text]) }
    }

    @Test func withoutPostgresItIsAUsageError() {
        #expect(throws: UsageError.self) { try Options.parse(["--cache-bytes", "64MB"]) }
    }
}
