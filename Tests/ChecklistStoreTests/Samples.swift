import ChecklistModel
import ChecklistRandom

extension SplitMix64 {
    /// True with a probability of `percent` in 100.
    mutating func chance(_ percent: Int) -> Bool {
        Int.random(in: 0..<100, using: &self) < percent
    }
}

/// Random item contents covering what the storage distinguishes: empty,
/// ASCII and multi-byte texts, checked or not, with or without due and price.
enum Samples {
    static let words = ["", "Walk the dog", "Brush my teeth", "Learn iOS development", "Soccer practice",
                        "Eat ice cream", "Grüße", "日本語のテキスト", "🍎🍐", "x"]

    static func fields(_ rng: inout SplitMix64) -> ItemFields {
        var text = words.randomElement(using: &rng) ?? ""
        if rng.chance(30) { text += String(repeating: "abc", count: Int.random(in: 0...20, using: &rng)) }
        return ItemFields(
            text: text,
            checked: rng.chance(40),
            due: rng.chance(20) ? Int64.random(in: -1_000_000...2_000_000_000, using: &rng) : nil,
            remind: rng.chance(20),
            price: rng.chance(15) ? Int64.random(in: -500...100_000, using: &rng) : nil)
    }
}
