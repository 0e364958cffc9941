@testable import checklist_bench
import ChecklistCommandLine
import ChecklistWire
import Testing

/// `checklist-bench load`'s thin-mode options and the texts its checks expect.
@Suite(.timeLimit(.minutes(10)))
struct LoadSettingsTests {
    private func settings(_ arguments: [String]) throws -> LoadScenario.Settings {
        try LoadScenario.Settings(try BenchArguments(arguments, LoadScenario.spec))
    }

    @Test func compressionOffsetAndTextBytes() throws {
        let defaults = try settings([])
        #expect(!defaults.compression && defaults.pageOffset == nil && defaults.textBytes == 0)
        let thin = try settings(["--compression", "off", "--offset", "500", "--items", "1000", "--text-bytes", "40"])
        #expect(!thin.compression && thin.pageOffset == 500 && thin.textBytes == 40)
        #expect(try settings(["--compression", "on", "--offset", "random"]).compression)
        #expect(throws: UsageError.self) { try settings(["--compression", "maybe"]) }
        #expect(throws: UsageError.self) { try settings(["--offset", "1000", "--items", "1000"]) }
        #expect(throws: UsageError.self) { try settings(["--offset", "-1"]) }
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

    /// PAGE rows as the server writes them: id, flags, text, due and price when flagged.
    private func rows(_ rows: [(id: UInt64, flags: UInt8, text: String)]) -> [UInt8] {
        var w = WireWriter()
        for row in rows {
            w.writeVarint(row.id)
            w.writeU8(row.flags)
            w.writeString(row.text)
            if row.flags & 4 != 0 { w.writeZigZag(-5) }
            if row.flags & 8 != 0 { w.writeZigZag(1999) }
        }
        return w.bytes
    }

    @Test func fastRowCheckAgreesWithTheTexts() {
        func check(_ bytes: [UInt8], first: Int, count: Int, textBytes: Int) -> Bool {
            bytes.withUnsafeBytes { LoadRowCheck.rowsAreRight($0, first: first, count: count, textBytes: textBytes) }
        }
        let right = (98..<103).map { (id: UInt64($0 + 1), flags: UInt8($0 % 2 == 0 ? 1 | 4 | 8 : 2), text: LoadPlan.itemText($0, textBytes: 40)) }
        #expect(check(rows(right), first: 98, count: 5, textBytes: 40))
        #expect(check(rows(right), first: 98, count: 4, textBytes: 40))  // bytes after the rows counted are not looked at
        #expect(check([], first: 0, count: 0, textBytes: 40))
        let unpadded = (0..<12).map { (id: UInt64($0 + 1), flags: UInt8(0), text: LoadPlan.itemText($0, textBytes: 0)) }
        #expect(check(rows(unpadded), first: 0, count: 12, textBytes: 0))
        #expect(!check(rows(unpadded), first: 0, count: 12, textBytes: 7))

        var wrong = right
        wrong[2].id = 1
        #expect(!check(rows(wrong), first: 98, count: 5, textBytes: 40))
        wrong = right
        wrong[3].flags = 0x10
        #expect(!check(rows(wrong), first: 98, count: 5, textBytes: 40))
        for bad in ["item 101" + String(repeating: ".", count: 31) + "x", "item 0101" + String(repeating: ".", count: 31),
                    "item 102" + String(repeating: ".", count: 32), "Item 101" + String(repeating: ".", count: 32)] {
            wrong = right
            wrong[3].text = bad
            #expect(!check(rows(wrong), first: 98, count: 5, textBytes: 40), "\(bad)")
        }
        let whole = rows(right)
        for cut in 0..<whole.count {
            #expect(!check(Array(whole[..<cut]), first: 98, count: 5, textBytes: 40))
        }
        #expect(!check(rows(right), first: 98, count: 6, textBytes: 40))
    }
}
