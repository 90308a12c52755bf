/// Google's `Money` (`units` as a decimal integer in a string, `nanos` in billionths) as an exact
/// decimal string, without trailing zeros and never through a binary floating point:
/// `"4"` and `990000000` give `"4.99"`, `"5"` and `0` give `"5"`, `"-1"` and `-750000000` give `"-1.75"`.
public enum Money {
    /// The decimal, or nil when the parts are not Google's: `units` not an integer, `nanos` outside
    /// ±999,999,999, or the two of opposite signs (Google requires the same sign for both).
    public static func decimalString(units: String, nanos: Int) -> String? {
        var digits = Substring(units.trimmingSpaces())
        var negative = false
        if digits.first == "-" || digits.first == "+" {
            negative = digits.first == "-"
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), abs(nanos) <= 999_999_999 else {
            return nil
        }
        let whole = String(digits.drop { $0 == "0" })
        let unitsAreZero = whole.isEmpty
        if !unitsAreZero && nanos != 0 && negative != (nanos < 0) { return nil }
        negative = unitsAreZero ? nanos < 0 : negative
        var text = unitsAreZero ? "0" : whole
        if nanos != 0 {
            var fraction = String(abs(nanos))
            fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
            while fraction.last == "0" { fraction.removeLast() }
            text += "." + fraction
        }
        return negative && text != "0" ? "-" + text : text
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
