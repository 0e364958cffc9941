/// Prices in currency units (the apps' `price`: 2.99) as this service keeps
/// them: integer cents, rounded half away from zero (2.99 is 299, 0.125 is
/// 13, -0.125 is -13). The rounding works on the decimal digits of the
/// number as written (JSON) or of the shortest decimal that reads back as
/// the stored float (property lists, keyed archives), so a Float price
/// 2.99f (2.9900000095...) is 299 and 1.005 is 101, as a person reads them.
public enum Price {
    /// Cents of a decimal number such as `2.99`, `-1.5e1`, `1E-3`; nil if
    /// it is not a number or does not fit (beyond ±9.2e16 units).
    public static func cents(decimal text: some StringProtocol) -> Int64? {
        var chars = Substring(text)
        var negative = false
        if chars.first == "-" || chars.first == "+" { negative = chars.removeFirst() == "-" }
        var digits: [UInt8] = []
        var exponent = 0
        var seenPoint = false, seenDigit = false
        while let c = chars.first, c != "e" && c != "E" {
            chars.removeFirst()
            if c == "." {
                guard !seenPoint else { return nil }
                seenPoint = true
            } else if let d = c.wholeNumberValue, c.isASCII {
                seenDigit = true
                if digits.isEmpty && d == 0 { if seenPoint { exponent -= 1 }; continue }
                digits.append(UInt8(d))
                if seenPoint { exponent -= 1 }
            } else {
                return nil
            }
        }
        guard seenDigit else { return nil }
        if !chars.isEmpty {
            chars.removeFirst()
            guard let e = Int(chars), abs(e) < 1000 else { return nil }
            exponent += e
        }
        // value = digits × 10^exponent; cents = value × 100.
        let shift = exponent + 2
        var magnitude: Int64 = 0
        let kept = shift >= 0 ? digits.count : digits.count + shift
        guard kept + max(shift, 0) <= 18 else { return digits.isEmpty ? 0 : nil }
        for d in digits.prefix(max(kept, 0)) { magnitude = magnitude * 10 + Int64(d) }
        if shift > 0 { for _ in 0..<shift { magnitude *= 10 } }
        if kept < digits.count, digits[max(kept, 0)...].first.map({ $0 >= 5 }) == true, kept >= 0 { magnitude += 1 }
        return negative ? -magnitude : magnitude
    }

    /// Cents of a price in units held as a double (see `cents(decimal:)`).
    public static func cents(units: Double) -> Int64? {
        guard units.isFinite else { return nil }
        return cents(decimal: "\(units)")
    }

    /// The units a number of cents is (299 is 2.99).
    public static func units(cents: Int64) -> Double {
        Double(cents) / 100
    }
}
