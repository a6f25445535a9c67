/// Pushwoosh's `Retry-After` header (RFC 9110, 10.2.3): how long to wait, as delta-seconds or an HTTP-date.
///
/// Parsed by hand so that the daemon needs no date formatter: delta-seconds (`120`) and the IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`) every current server sends. Anything else is not understood and gives nil:
/// the caller then waits its ordinary backoff.
public enum RetryAfter {
    /// The wait in seconds from `now` (Unix seconds on the wall clock, for a date): never negative.
    public static func seconds(_ header: String, now: Double) -> Double? {
        let text = ConfigurationParser.trimmed(header)
        guard !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // Anything longer than eleven digits is over three thousand years: capped by the caller anyway.
            return Double(text.utf8.count > 11 ? "99999999999" : text)
        }
        guard let date = imfFixdate(text) else { return nil }
        return max(0, date - now)
    }

    /// An IMF-fixdate as Unix seconds: `Sun, 06 Nov 1994 08:49:37 GMT`.
    public static func imfFixdate(_ text: String) -> Double? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 6, parts[0].count == 4, parts[0].last == ",", parts[5] == "GMT" else { return nil }
        guard let weekday = weekdays.firstIndex(of: String(parts[0].dropLast())) else { return nil }
        guard let monthIndex = months.firstIndex(of: String(parts[2])) else { return nil }
        guard parts[3].count == 4, let year = number(parts[3]) else { return nil }
        // 31 Feb is no date, and a weekday that is not the date's says the header is not a time either.
        guard parts[1].count == 2, let day = number(parts[1]),
            (1...daysIn(month: monthIndex + 1, year: year)).contains(day)
        else { return nil }
        let clock = parts[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }) else { return nil }
        guard let hour = number(clock[0]), let minute = number(clock[1]), let second = number(clock[2]),
            hour < 24, minute < 60, second < 61
        else { return nil }
        let days = daysSinceEpoch(year: year, month: monthIndex + 1, day: day)
        // 1970-01-01 was a Thursday; `weekdays` starts on Sunday.
        guard ((days % 7 + 7 + 4) % 7) == weekday else { return nil }
        return Double(days * 86400 + hour * 3600 + minute * 60 + second)
    }

    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The days of a month in the Gregorian calendar.
    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int(text)
    }

    /// Days from 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's `days_from_civil`).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146097 + dayOfEra - 719468
    }
}
