import LedgerDemo
import Foundation
import PurchaseLedger

/// A seeded corpus of hostile NDJSON input for `ledger ingest`, with what the test may expect
/// of each line: systematic cases (every field missing in turn, every field of the wrong type,
/// every truncation of a valid line, invalid UTF-8, lone surrogates, control characters, deep
/// nesting, huge numbers, lines of 10 MB and lines at the length limit), random mutations of
/// valid lines (bit flips, byte changes, insertions, deletions, truncations, spliced tokens)
/// and, among them, valid lines whose outcome is known.
///
/// Valid lines use names (`valid-…`, `vtx-…`) that no mutation of the other lines (`mut-…`,
/// `sys-…`, `mtx-…`) can reach in three byte edits, so their outcome does not depend on the noise.
struct HostileLines {
    /// What one line must produce.
    enum Expectation: Equatable {
        /// Skipped: blank (spaces and tabs only, after a trailing `\r`): no result.
        case blank
        /// Exactly one result, whatever it is.
        case anyResult
        /// A valid line: exactly this status.
        case status(String)
        /// Refused with this code, and the message names `field` when given.
        case refused(code: String, naming: String?)
    }

    private(set) var lines: [[UInt8]] = []
    private(set) var expectations: [Expectation] = []
    private var random: SplitMix64
    private var validCount = 0
    private var consumable: [(seq: String, user: String)] = []
    private var lineages: [(id: String, user: String)] = []

    /// About `count` lines from `seed`, plus `bigLines` lines of 10 MB.
    init(seed: UInt64, count: Int, bigLines: Int = 3) {
        random = SplitMix64(seed: seed)
        addSystematic()
        addSpecials(bigLines: bigLines)
        while lines.count < count {
            if random.next() % 20 == 0 { addValid() } else { addMutant() }
        }
    }

    // MARK: - Sections

    private mutating func add(_ bytes: [UInt8], _ expectation: Expectation) {
        // A newline would split the line in two: keep every generated line on one line.
        let line = bytes.map { $0 == 0x0A ? 0x0B : $0 }
        var content = line[...]
        if content.last == 0x0D { content = content.dropLast() }
        let blank = content.allSatisfy { $0 == 0x20 || $0 == 0x09 }
        lines.append(line)
        expectations.append(blank ? .blank : expectation)
    }

    private mutating func add(_ text: String, _ expectation: Expectation) { add(Array(text.utf8), expectation) }

    /// Every field missing in turn, every field of every wrong type, every truncation.
    private mutating func addSystematic() {
        var n = 0
        let templates = Self.templates("0")
        for (t, template) in templates.enumerated() {
            for (index, field) in template.fields.enumerated() {
                n += 1
                for (k, wrong) in Self.wrongValues.enumerated() {
                    var fields = Self.template(t, "\(n)-\(k)").fields
                    fields[index].value = wrong
                    let required = template.required.contains(field.key)
                    let named = (wrong == "null" && required) || wrong == "{}" || (wrong == "[]" && field.key != "purchases")
                    add(Self.render(fields), named ? .refused(code: "INVALID_INPUT", naming: field.key) : .anyResult)
                }
                var fields = template.fields
                fields.remove(at: index)
                add(Self.render(fields), template.required.contains(field.key)
                    ? .refused(code: "INVALID_INPUT", naming: field.key) : .anyResult)
            }
            // The restore's item: every field missing in turn.
            if !template.itemRequired.isEmpty {
                let item = Self.payment(seq: "sys-im", tx: "mtx-im", user: "mut-user", type: "AUTO_RENEWABLE")
                for index in item.indices {
                    var fields = item
                    fields.remove(at: index)
                    var line = template.fields
                    line[line.count - 1].value = "[" + Self.render(fields) + "]"
                    add(Self.render(line), template.itemRequired.contains(item[index].key)
                        ? .refused(code: "INVALID_INPUT", naming: "purchases[0]." + item[index].key) : .anyResult)
                }
            }
            // Every truncation: a strict prefix of a JSON object is never valid JSON.
            let full = Array(Self.render(template.fields).utf8)
            for length in 0..<full.count {
                add(Array(full[..<length]), .refused(code: "INVALID_INPUT", naming: nil))
            }
        }
    }

    private mutating func addSpecials(bigLines: Int) {
        let purchase = Self.render([("type", Self.q("purchase"))] + Self.payment(seq: "sys-x", tx: "mtx-x", user: "mut-user"))
        let invalidUTF8: [[UInt8]] = [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80],
                                      [0xE2, 0x82], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xC3], [0xEF, 0xBF]]
        for bad in invalidUTF8 {
            var bytes = Array(purchase.utf8)
            let at = bytes.firstIndex(of: UInt8(ascii: "7"))!  // inside the payload string
            bytes.insert(contentsOf: bad, at: at)
            add(bytes, .refused(code: "INVALID_INPUT", naming: nil))
        }
        for control: UInt8 in [0x00, 0x01, 0x08, 0x1F, 0x0D] {
            var bytes = Array(purchase.utf8)
            bytes.insert(control, at: bytes.firstIndex(of: UInt8(ascii: "7"))!)
            add(bytes, .refused(code: "INVALID_INPUT", naming: nil))
        }
        for escape in ["\\ud800", "\\udc00", "\\ud800\\ud800", "\\uDBFF", "\\u12", "\\x41", "\\"] {
            add(purchase.replacingOccurrences(of: "character-7", with: "character" + escape), .refused(code: "INVALID_INPUT", naming: nil))
        }
        for text in ["\u{FEFF}" + purchase, purchase + " x", purchase + purchase, "[" + purchase + "]", "\"purchase\"",
                     "null", "0", "{}", "{\"type\":\"frobnicate\"}", "{\"type\":null}", "{\"type\":1}",
                     String(repeating: "[", count: 100_000), String(repeating: "{\"a\":", count: 10_000),
                     String(repeating: "[", count: 65) + String(repeating: "]", count: 65),
                     "\u{0B}", "\u{0C}", "\u{A0}", "\u{2028}"] {
            add(text, .refused(code: "INVALID_INPUT", naming: nil))
        }
        for text in ["", " ", "\t \t", "\r", " \r"] { add(text, .blank) }
        // Lines of 10 MB: refused by their length, whatever they hold.
        let ten = 10 << 20
        for k in 0..<bigLines {
            let bytes: [UInt8]
            switch k % 3 {
            case 0: bytes = Array(repeating: UInt8(ascii: "a"), count: ten)
            case 1:
                bytes = Array(purchase.replacingOccurrences(of: "character-7", with: String(repeating: "p", count: ten)).utf8)
            default: bytes = Array(repeating: UInt8(ascii: "["), count: ten)
            }
            add(bytes, .refused(code: "INVALID_INPUT", naming: nil))
        }
        // At the limit of 4 MiB a line: accepted at exactly the limit, refused one byte over it.
        let limit = 4 << 20
        for (offset, expectation) in [(0, Expectation.status("recorded")), (1, .refused(code: "INVALID_INPUT", naming: nil))] {
            let body = Self.render([("type", Self.q("purchase"))]
                + Self.payment(seq: "valid-limit-\(offset)", tx: "vtx-limit-\(offset)", user: "valid-user-limit"))
            var bytes = Array(body.utf8.dropLast())
            bytes += Array(repeating: UInt8(ascii: " "), count: limit + offset - bytes.count - 1)
            bytes.append(UInt8(ascii: "}"))
            add(bytes, expectation)
        }
    }

    /// A valid line whose outcome is known.
    private mutating func addValid() {
        validCount += 1
        let n = 1_000_000 + validCount
        let user = "valid-user-\(1000 + n % 300)"
        switch random.next() % 10 {
        case 0 where !consumable.isEmpty:
            let payment = consumable.remove(at: Int(random.next() % UInt64(consumable.count)))
            add(Self.render([("type", Self.q("consume")), ("userId", Self.q(payment.user)),
                             ("paymentSeq", Self.q(payment.seq)), ("purchaseToken", Self.q("tok-" + payment.seq))]),
                .status("consumed"))
        case 1 where !consumable.isEmpty:
            let payment = consumable.remove(at: Int(random.next() % UInt64(consumable.count)))
            add(Self.render([("type", Self.q("refund")), ("paymentSeq", Self.q(payment.seq))]), .status("recorded"))
        case 2:
            let id = "vtx-\(n)"
            lineages.append((id, user))
            add(Self.render([("type", Self.q("purchase"))]
                + Self.payment(seq: "valid-\(n)", tx: id, user: user, type: "AUTO_RENEWABLE")), .status("recorded"))
        case 3 where !lineages.isEmpty:
            let lineage = lineages.remove(at: Int(random.next() % UInt64(lineages.count)))
            add(Self.render([("type", Self.q("cancel")), ("storeCode", Self.q("AS")),
                             ("originalTransactionId", Self.q(lineage.id))]), .status("recorded"))
        case 4:
            let items = (0..<2).map { k in
                Self.render(Self.payment(seq: "valid-\(n)-\(k)", tx: "vtx-\(n)-\(k)", user: "valid-restorer-\(n)",
                                         type: "CONSUMABLE_AUTO_RENEWABLE", original: "vtx-\(n)-0"))
            }
            add(Self.render([("type", Self.q("restore")), ("userId", Self.q("valid-restorer-\(n)")),
                             ("storeCode", Self.q("AS")), ("purchases", "[" + items.joined(separator: ",") + "]")]),
                .status("restored"))
        default:
            let seq = "valid-\(n)"
            consumable.append((seq, user))
            let text = Self.render([("type", Self.q("purchase"))] + Self.payment(seq: seq, tx: "vtx-\(n)", user: user))
            switch random.next() % 4 {
            case 0: add(text + "\r", .status("recorded"))
            case 1: add(" \t" + text + "  ", .status("recorded"))
            default: add(text, .status("recorded"))
            }
        }
    }

    /// A random template, mutated one to three times.
    private mutating func addMutant() {
        let pick = Int(random.next() % UInt64(Self.kinds))
        let n = "\(random.next() % 300)"
        var fields = Self.template(pick, n).fields
        if random.next() % 4 == 0, !fields.isEmpty {  // structure-aware: one field's value or presence
            let index = Int(random.next() % UInt64(fields.count))
            if random.next() % 3 == 0 {
                fields.remove(at: index)
            } else {
                fields[index].value = Self.wrongValues[Int(random.next() % UInt64(Self.wrongValues.count))]
            }
        }
        var bytes = Array(Self.render(fields).utf8)
        for _ in 0...(random.next() % 3) where !bytes.isEmpty {
            let at = Int(random.next() % UInt64(bytes.count))
            switch random.next() % 8 {
            case 0: bytes[at] ^= UInt8(1) << (random.next() % 8)
            case 1: bytes[at] = UInt8(truncatingIfNeeded: random.next())
            case 2: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: at)
            case 3: bytes.remove(at: at)
            case 4: bytes.removeSubrange(at...)
            case 5:
                let end = min(bytes.count, at + Int(random.next() % 40))
                bytes.insert(contentsOf: bytes[at..<end], at: at)
            case 6:
                bytes.insert(contentsOf: Array(Self.interesting[Int(random.next() % UInt64(Self.interesting.count))].utf8), at: at)
            default:
                let bad: [UInt8] = [[0xFF], [0xC0, 0xAF], [0xED, 0xB0, 0x80], [0xE2, 0x82]][Int(random.next() % 4)]
                bytes.insert(contentsOf: bad, at: at)
            }
        }
        add(bytes, .anyResult)
    }
}
