import ChecklistClient

/// Parsing and printing of the values the command line carries: numbers,
/// dates and prices (the server address is `ServerAddress`). Parsers return nil for bad input;
/// the caller turns that into a usage error naming the argument.
enum Values {
    /// A decimal number of ASCII digits only (no sign, no spaces).
    static func unsigned(_ text: String) -> UInt64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return UInt64(text)
    }

    /// An id: digits, at least 1.
    static func id(_ text: String) -> UInt64? {
        guard let value = unsigned(text), value > 0 else { return nil }
        return value
    }

    /// A count: digits, at least 1, that fits an `Int`.
    static func positiveInt(_ text: String) -> Int? {
        id(text).flatMap { Int(exactly: $0) }
    }

    /// `YYYY-MM-DD` → seconds since 1970-01-01 at midnight UTC.
    static func date(_ text: String) -> Int64? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = unsigned(String(parts[0])), let month = unsigned(String(parts[1])),
              let day = unsigned(String(parts[2])),
              (1...12).contains(month), day >= 1, day <= daysInMonth(Int64(year), Int64(month)) else { return nil }
        return daysFromCivil(Int64(year), Int64(month), Int64(day)) * 86_400
    }

    /// Seconds since 1970 → `YYYY-MM-DD` of that UTC day.
    static func formatDate(_ seconds: Int64) -> String {
        let days = seconds / 86_400 - (seconds % 86_400 < 0 ? 1 : 0)  // floor
        let (year, month, day) = civilFromDays(days)
        let y = year < 0 ? "-" + pad(-year, 4) : pad(year, 4)
        return "\(y)-\(pad(month, 2))-\(pad(day, 2))"
    }

    /// `3.50`, `3.5`, `3`, `-0.25` → minor units (350, 350, 300, -25).
    /// At most two decimals.
    static func price(_ text: String) -> Int64? {
        var body = Substring(text)
        let negative = body.hasPrefix("-")
        if negative { body = body.dropFirst() }
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        let whole = String(parts[0])
        let fraction = parts.count == 2 ? String(parts[1]) : ""
        guard !(whole.isEmpty && fraction.isEmpty), fraction.count <= 2, parts.count == 1 || !fraction.isEmpty else { return nil }
        guard let units = whole.isEmpty ? 0 : unsigned(whole),
              let cents = fraction.isEmpty ? 0 : unsigned(fraction) else { return nil }
        let scaledCents = fraction.count == 1 ? cents * 10 : cents
        guard units <= UInt64(Int64.max) else { return nil }
        let (hundreds, overflow) = Int64(units).multipliedReportingOverflow(by: 100)
        let (total, overflow2) = hundreds.addingReportingOverflow(Int64(scaledCents))
        guard !overflow, !overflow2 else { return nil }
        return negative ? -total : total
    }

    /// Minor units → `3.50`.
    static func formatPrice(_ minor: Int64) -> String {
        let magnitude = minor.magnitude
        let sign = minor < 0 ? "-" : ""
        return "\(sign)\(magnitude / 100).\(pad(Int64(magnitude % 100), 2))"
    }

    // MARK: Calendar (proleptic Gregorian, UTC; H. Hinnant's algorithms)

    private static func daysInMonth(_ year: Int64, _ month: Int64) -> UInt64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func daysFromCivil(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civilFromDays(_ days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
