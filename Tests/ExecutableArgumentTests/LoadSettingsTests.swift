@testable import checklist_bench
import Testing

/// `checklist-bench load`'s thin-mode options and the texts its checks expect.
@Suite(.timeLimit(.minutes(10)))
struct LoadSettingsTests {
    private func settings(_ arguments: [String]) throws -> LoadScenario.Settings {
        try LoadScenario.Settings(try BenchArguments(ArraySlice(arguments), flagNames: ["json"]))
    }

    @Test func compressionOffsetAndTextBytes() throws {
        let defaults = try settings([])
        #expect(!defaults.compression && defaults.pageOffset == nil && defaults.textBytes == 0)
        let thin = try settings(["--compression", "off", "--offset", "500", "--items", "1000", "--text-bytes", "40"])
        #expect(!thin.compression && thin.pageOffset == 500 && thin.textBytes == 40)
        #expect(try settings(["--compression", "on", "--offset", "random"]).compression)
        #expect(throws: BenchArguments.UsageError.self) { try settings(["--compression", "maybe"]) }
        #expect(throws: BenchArguments.UsageError.self) { try settings(["--offset", "1000", "--items", "1000"]) }
        #expect(throws: BenchArguments.UsageError.self) { try settings(["--offset", "-1"]) }
    }

    @Test func paddedItemTextsAreChecked() {
        func check(_ text: String, _ index: Int, _ textBytes: Int) -> Bool {
            Array(text.utf8).withUnsafeBytes { LoadConnection.isItemText($0, index: index, textBytes: textBytes) }
        }
        let padded = LoadPlan.itemText(42, textBytes: 40)
        #expect(padded.utf8.count == 40 && padded.hasPrefix("item 42."))
        #expect(check(padded, 42, 40))
        #expect(!check(padded, 4, 40) && !check(padded, 420, 40) && !check(padded, 42, 0) && !check(padded, 42, 41))
        #expect(!check("item 42" + String(repeating: "x", count: 33), 42, 40))
        #expect(LoadPlan.itemText(12345, textBytes: 4) == "item 12345")
        #expect(check("item 12345", 12345, 4) && check("item 0", 0, 0) && !check("item 01", 1, 0) && !check("item ", 0, 0))
    }
}
