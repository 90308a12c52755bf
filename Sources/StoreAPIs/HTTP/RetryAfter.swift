import Foundation

/// Reads an HTTP `Retry-After` value as the stores send it.
public enum RetryAfter {
    /// Numbers above this are Apple's UNIX time in milliseconds (10¹¹ ms is March 1973; 10¹¹ s of
    /// delay is three thousand years), below it delta seconds.
    static let epochMillisecondsThreshold: Double = 1e11

    /// The delay, in seconds from `now`, that `value` asks for: delta seconds (`120`), an HTTP date
    /// (`Wed, 21 Oct 2026 07:28:00 GMT`, also the obsolete RFC 850 and asctime forms), or Apple's
    /// epoch milliseconds (`1767225600000`). A time already past gives 0; an unreadable value nil.
    public static func delay(_ value: String, now: Date = Date()) -> TimeInterval? {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        if text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let number = Double(text) {
            if number > epochMillisecondsThreshold {
                return max(0, number / 1000 - now.timeIntervalSince1970)
            }
            return number
        }
        for format in httpDateFormats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) {
                return max(0, date.timeIntervalSince(now))
            }
        }
        return nil
    }

    /// RFC 9110 §5.6.7: IMF-fixdate, then the obsolete RFC 850 and asctime forms.
    static let httpDateFormats = ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"]
}
