import ChecklistModel

/// A tiny deterministic RNG (SplitMix64), so every random test replays
/// exactly from its seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

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
