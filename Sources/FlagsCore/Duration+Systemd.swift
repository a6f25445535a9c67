extension Duration {
    /// Parses a systemd time span (`systemd.time(7)`), such as `500ms`, `10s`, `1h 30min`, `1h30min` or `1.5h`.
    ///
    /// A span is one or more components, each a non-negative decimal number (a fraction is allowed) and a unit;
    /// components add up. A number without a unit is seconds, as in systemd. Units, case-sensitive as in systemd:
    /// `us`/`usec`/`µs`, `ms`/`msec`, `s`/`sec`/`second`/`seconds`, `m`/`min`/`minute`/`minutes`,
    /// `h`/`hr`/`hour`/`hours`, `d`/`day`/`days`, `w`/`week`/`weeks`, `M`/`month`/`months` and `y`/`year`/`years`.
    /// A month is a twelfth of a year and a year 365.25 days, the values systemd computes with (the man page rounds
    /// the month to 30.44 days). The result is whole microseconds, systemd's resolution; finer fractions are
    /// dropped.
    ///
    /// Returns nil for an empty text, a sign, an unknown unit, anything else that is not a span, and spans beyond
    /// what systemd can hold (2^63 - 1 microseconds).
    public init?(systemdTimeSpan text: String) {
        guard let microseconds = SystemdTimeSpan.microseconds(parsing: text) else { return nil }
        self = .microseconds(microseconds)
    }

    /// This duration in systemd's compact spelling, such as `1h 30min`, `500ms`, `24h` or `0`.
    ///
    /// Components run from the largest unit down, separated by spaces. Hours are the largest unit below two days,
    /// so that the common `24h` reads as written; from two days on, days lead (`2d 1h`). Months and years are never
    /// printed because they are not whole days. Precision below a microsecond is dropped, as systemd cannot read
    /// it back. A negative duration, which no configuration key accepts, prints with a leading `-`.
    public var systemdTimeSpan: String {
        let (seconds, attoseconds) = components
        let total = Int128(seconds) * 1_000_000 + Int128(attoseconds) / 1_000_000_000_000
        return SystemdTimeSpan.format(microseconds: total)
    }
}

/// The unit table and the arithmetic behind `Duration(systemdTimeSpan:)` and `Duration.systemdTimeSpan`.
private enum SystemdTimeSpan {
    static let microsecondsPerSecond: Int128 = 1_000_000
    static let microsecondsPerDay: Int128 = 86_400 * microsecondsPerSecond
    static let microsecondsPerYear: Int128 = 31_557_600 * microsecondsPerSecond

    /// Unit spellings and their lengths in microseconds.
    static let units: [String: Int128] = [
        "us": 1, "usec": 1, "\u{B5}s": 1, "\u{3BC}s": 1,
        "ms": 1000, "msec": 1000,
        "s": microsecondsPerSecond, "sec": microsecondsPerSecond, "second": microsecondsPerSecond,
        "seconds": microsecondsPerSecond,
        "m": 60 * microsecondsPerSecond, "min": 60 * microsecondsPerSecond, "minute": 60 * microsecondsPerSecond,
        "minutes": 60 * microsecondsPerSecond,
        "h": 3600 * microsecondsPerSecond, "hr": 3600 * microsecondsPerSecond, "hour": 3600 * microsecondsPerSecond,
        "hours": 3600 * microsecondsPerSecond,
        "d": microsecondsPerDay, "day": microsecondsPerDay, "days": microsecondsPerDay,
        "w": 7 * microsecondsPerDay, "week": 7 * microsecondsPerDay, "weeks": 7 * microsecondsPerDay,
        "M": microsecondsPerYear / 12, "month": microsecondsPerYear / 12, "months": microsecondsPerYear / 12,
        "y": microsecondsPerYear, "year": microsecondsPerYear, "years": microsecondsPerYear,
    ]

    /// The units `format` prints, largest first.
    static let printedUnits: [(name: String, microseconds: Int128)] = [
        ("d", microsecondsPerDay), ("h", 3600 * microsecondsPerSecond), ("min", 60 * microsecondsPerSecond),
        ("s", microsecondsPerSecond), ("ms", 1000), ("us", 1),
    ]

    /// Fraction digits beyond this many cannot change a microsecond count of any unit, and would overflow.
    static let maximumFractionDigits = 18

    static func microseconds(parsing text: String) -> Int64? {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        var total: Int128 = 0
        var components = 0

        func isWhitespace(_ scalar: Unicode.Scalar) -> Bool { scalar == " " || scalar == "\t" || scalar == "\n" }
        func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }
        func digitValue(_ scalar: Unicode.Scalar) -> Int128 { Int128(scalar.value - 48) }
        func isUnitLetter(_ scalar: Unicode.Scalar) -> Bool {
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || scalar == "\u{B5}" || scalar == "\u{3BC}"
        }

        while true {
            while index < scalars.count, isWhitespace(scalars[index]) { index += 1 }
            guard index < scalars.count else { break }

            var integer: Int128 = 0
            var digits = 0
            while index < scalars.count, isDigit(scalars[index]) {
                integer = integer * 10 + digitValue(scalars[index])
                digits += 1
                index += 1
                // Anything this large is out of range whatever the unit; stop before Int128 overflows.
                guard integer <= Int128(Int64.max) else { return nil }
            }
            var fraction: Int128 = 0
            var fractionScale: Int128 = 1
            if index < scalars.count, scalars[index] == "." {
                index += 1
                var fractionDigits = 0
                while index < scalars.count, isDigit(scalars[index]) {
                    if fractionDigits < maximumFractionDigits {
                        fraction = fraction * 10 + digitValue(scalars[index])
                        fractionScale *= 10
                    }
                    fractionDigits += 1
                    index += 1
                }
                guard fractionDigits > 0 else { return nil }
                digits += fractionDigits
            }
            guard digits > 0 else { return nil }

            // systemd allows blanks between a number and its unit: `5 min`.
            while index < scalars.count, isWhitespace(scalars[index]) { index += 1 }
            let unitStart = index
            while index < scalars.count, isUnitLetter(scalars[index]) { index += 1 }
            let unitName = String(String.UnicodeScalarView(scalars[unitStart..<index]))
            let unit: Int128
            if unitName.isEmpty {
                unit = microsecondsPerSecond
            } else {
                guard let known = units[unitName] else { return nil }
                unit = known
            }
            // A component ends at a blank, the end, or (after a unit) the next number: `1h30min`, not `1.5.5`.
            if index < scalars.count, !isWhitespace(scalars[index]) {
                guard !unitName.isEmpty, isDigit(scalars[index]) else { return nil }
            }

            total += integer * unit + fraction * unit / fractionScale
            guard total <= Int128(Int64.max) else { return nil }
            components += 1
        }
        guard components > 0 else { return nil }
        return Int64(total)
    }

    static func format(microseconds: Int128) -> String {
        if microseconds == 0 { return "0" }
        if microseconds < 0 { return "-" + format(microseconds: -microseconds) }
        let units = microseconds >= 2 * microsecondsPerDay ? printedUnits : Array(printedUnits.dropFirst())
        var remainder = microseconds
        var parts: [String] = []
        for unit in units where remainder >= unit.microseconds {
            parts.append("\(remainder / unit.microseconds)\(unit.name)")
            remainder %= unit.microseconds
        }
        return parts.joined(separator: " ")
    }
}

extension Duration {
    /// The duration in seconds, as a Double.
    public var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
