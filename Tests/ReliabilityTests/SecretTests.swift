import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

@Suite("Secrets: purchase tokens and passwords")
struct SecretTests {
    /// Lines that carry purchase tokens in every place a token can travel: a purchase, a
    /// subscription, a right and a wrong consume, a conflicting redelivery, a restore, the SDKs'
    /// alias, and refused lines (truncated, too long, another field malformed).
    struct TokenLines {
        let tokens: [String]
        let lines: [String]

        init() {
            let tag = UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12)
            let t = (0..<8).map { "SECRET\($0)x\(tag)" }
            tokens = t
            let item = ContractLines.paymentFields(seq: "R-1", type: "AUTO_RENEWABLE", transaction: "R-1", original: "R-1", token: t[4])
            lines = [
                ContractLines.purchase("P-1", token: t[0]),
                ContractLines.object([("type", "\"purchase\"")]
                    + ContractLines.paymentFields(seq: "S-1", type: "AUTO_RENEWABLE", transaction: "S-1", original: "S-1", token: t[1])),
                ContractLines.consume("P-1", token: t[2]),
                ContractLines.consume("P-1", token: t[0]),
                ContractLines.purchase("P-1", token: t[3]),
                ContractLines.restore(user: "u1", items: [item]),
                ContractLines.purchase("P-2", token: t[5]).replacingOccurrences(of: "purchaseToken", with: "accessToken"),
                ContractLines.consume("P-2", token: t[5]).replacingOccurrences(of: "\"paymentSeq\":\"P-2\"", with: "\"paymentSeq\":2"),
                Self.cut(ContractLines.consume("P-2", token: t[6]), after: t[6]),
                ContractLines.consume("P-2", token: t[7] + String(repeating: "7", count: 4096)),
            ]
        }

        /// `line` up to the end of `token`: a string that never ends.
        static func cut(_ line: String, after token: String) -> String {
            String(line[..<line.range(of: token)!.upperBound])
        }

        /// Each token as written, and its UTF-8 bytes in hex (as a bytea column would show them).
        var forms: [String] {
            tokens.flatMap { [$0, Data($0.utf8).map { String(format: "%02x", $0) }.joined()] }
        }

        func leaks(in text: String) -> [String] { forms.filter { text.contains($0) } }
    }

    @Test func purchaseTokensAreStoredOnlyAsDigestsAndNeverPrinted() async throws {
        let secrets = TokenLines()
        try await TestDatabase.with { db in
            let out = try LedgerProcess.run(["ingest", "--database-url", db.conninfo], input: ContractLines.file(secrets.lines))
            #expect(out.status == 1, "\(out.stderr)")
            let statuses = try IngestResult.all(out.lines).map { $0.code ?? $0.status }
            #expect(statuses == ["recorded", "recorded", "TOKEN_INVALID", "consumed", "PAYMENT_CONFLICT", "restored",
                                 "recorded", "INVALID_INPUT", "INVALID_INPUT", "INVALID_INPUT"])
            #expect(secrets.leaks(in: out.stdout + out.stderr).isEmpty, "ingest printed a token")
            for arguments in [["unconsumed", "--user", "u1", "--json"], ["unconsumed", "--user", "u1"],
                              ["subscriptions", "--user", "u1", "--include-expired", "--json"],
                              ["subscriptions", "--user", "u1", "--include-expired"]] {
                let query = try LedgerProcess.run(arguments + ["--database-url", db.conninfo])
                #expect(query.status == 0)
                #expect(secrets.leaks(in: query.stdout + query.stderr).isEmpty, "\(arguments) printed a token")
            }
            try db.withConnection { c throws in
                // Nowhere in the ledger's tables and views: not as text, not as bytes.
                let relations = try c.query("""
                    SELECT table_schema::text AS s, table_name::text AS t FROM information_schema.tables
                     WHERE table_schema IN ('ledger', 'analytics')
                    """).map { (try $0.decode("s", as: String.self), try $0.decode("t", as: String.self)) }
                #expect(relations.contains { $0 == ("ledger", "events") })
                for (schema, table) in relations {
                    for form in secrets.forms {
                        let found = try c.query("""
                            SELECT count(*)::bigint AS n FROM \(identifier: schema).\(identifier: table) r
                             WHERE strpos(r::text, \(form)) > 0
                            """)[0].decode("n", as: Int.self)
                        #expect(found == 0, "\(schema).\(table) holds a token")
                    }
                }
                // What is kept is the SHA-256 digest.
                let t = secrets.tokens
                for (seq, token) in [("P-1", t[0]), ("S-1", t[1]), ("R-1", t[4]), ("P-2", t[5])] {
                    let row = try c.query("""
                        SELECT p.token_sha256 = sha256(convert_to(\(token), 'UTF8')) AS kept,
                               e.data->>'purchaseTokenSha256' = encode(sha256(convert_to(\(token), 'UTF8')), 'hex') AS logged
                          FROM ledger.payments p JOIN ledger.events e ON e.position = p.recorded_position
                         WHERE p.payment_seq = \(seq)
                        """)[0]
                    #expect(try row.decode("kept", as: Bool.self) && row.decode("logged", as: Bool.self), "\(seq)")
                }
            }
        }
    }

    static let password = "s3cr3t-PW-9f2"

    @Test(arguments: [
        "postgresql://ledger:\(password)@127.0.0.1:1/nodb",
        "postgresql://ledger:\(password)@127.0.0.1:1/nodb?connect_timeout=2",
        "postgresql://ledger:s3cr3t%2DPW%2D9f2@127.0.0.1:1/nodb",
        "postgresql://ledger@127.0.0.1:1/nodb?password=\(password)",
        "postgresql://ledger:\(password)@/nodb?host=/nonexistent-socket-dir",
        "postgresql://ledger:\(password)%ZZ@127.0.0.1:1/nodb",
        "postgresql://ledger:\(password)@[::1",
        "postgresql://ledger:\(password)@127.0.0.1:99999/nodb",
        "host=127.0.0.1 port=1 user=ledger password=\(password) dbname=nodb",
        "host=127.0.0.1 port=1 password='\(password)' dbname=nodb",
        "host=127.0.0.1 password='\(password)",
        "host=127.0.0.1 passwrd=\(password)",
        "host=127.0.0.1 port=1 password=\(password) sslmode=bogus",
    ])
    func connectionErrorsNeverPrintThePassword(url: String) throws {
        for command in [["ingest", "-"], ["unconsumed", "--user", "u1"], ["subscriptions", "--user", "u1"], ["migrate"]] {
            let out = try LedgerProcess.run(command + ["--database-url", url], input: ContractLines.purchase("P-1") + "\n",
                                            timeout: 60)
            #expect(out.status == 2, "\(command): \(out.status)")
            #expect(out.stderr.split(separator: "\n").count == 1, "\(command): \(out.stderr)")
            for secret in [Self.password, "s3cr3t", "%2DPW"] {
                #expect(!out.stderr.contains(secret) && !out.stdout.contains(secret), "\(command) printed the password: \(out.stderr)")
            }
        }
    }

    @Test func digestEqualIsFalseForAnyOtherDigestAndForMissingOnes() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                // Equal-length digests that differ in one byte, for every byte position: all unequal.
                let unequal = try c.query("""
                    WITH d AS (SELECT sha256('token') AS a)
                    SELECT count(*) FILTER (WHERE ledger.digest_equal(a, set_byte(a, i, get_byte(a, i) # 1)))::bigint AS equal_by_mistake,
                           count(*)::bigint AS positions,
                           bool_and(ledger.digest_equal(a, a)) AS self_equal
                      FROM d, generate_series(0, 31) AS i
                    """)[0]
                #expect(try unequal.decode("positions", as: Int.self) == 32)
                #expect(try unequal.decode("equal_by_mistake", as: Int.self) == 0)
                #expect(try unequal.decode("self_equal", as: Bool.self))
                // The first and the last byte, and other lengths; an unknown input is not equal.
                let row = try c.query("""
                    WITH d AS (SELECT sha256('token') AS a)
                    SELECT ledger.digest_equal(a, set_byte(a, 0, 0) ) IS FALSE AS first,
                           ledger.digest_equal(a, set_byte(a, 31, get_byte(a, 31) # 128)) IS FALSE AS last,
                           ledger.digest_equal(a, substr(a, 1, 31)) IS FALSE AS shorter,
                           ledger.digest_equal(a, a || '\\x00'::bytea) IS FALSE AS longer,
                           ledger.digest_equal(a, NULL) IS FALSE AS null_right,
                           ledger.digest_equal(NULL, a) IS FALSE AS null_left
                      FROM d
                    """)[0]
                for column in ["first", "last", "shorter", "longer", "null_right", "null_left"] {
                    #expect(try row.decode(column, as: Bool?.self) == true, "digest_equal: \(column)")
                }
                // Where a comparison stops says nothing about the stored digest: it compares the
                // SHA-256 of both digests (Schema/definitions/commands/digest_equal.sql). What a
                // test can hold it to without reading its text: the body is one SQL expression (a
                // SQL-standard body, so no loop, no early exit, no query), read from the catalog.
                let expression = try c.query("""
                    SELECT p.prosqlbody IS NOT NULL AND l.lanname = 'sql' AS expression
                      FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
                     WHERE p.oid = 'ledger.digest_equal(bytea, bytea)'::regprocedure
                    """)[0].decode("expression", as: Bool.self)
                #expect(expression, "digest_equal is not a single SQL expression")
            }
        }
    }

    /// A wrong token goes the same way as the right one up to the comparison: the same statement,
    /// the same lookup by paymentSeq and the same row lock, with no shortcut that answers a wrong
    /// token sooner (a lookup by digest, a check before the lock).
    @Test func aWrongTokenTakesTheSamePathAsTheRightOneUpToTheComparison() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in _ = try c.ingest([ContractLines.purchase("P-1")]) }
            let holder = try db.connect()
            defer { holder.close() }
            try holder.executeScript(unsafeSQL: "BEGIN")
            try holder.query("SELECT 1 FROM ledger.payments WHERE payment_seq = 'P-1' FOR UPDATE")
            let wrong = try LedgerProcess.start(["ingest", "--database-url", db.conninfo],
                                                input: ContractLines.consume("P-1", token: "not-the-token") + "\n")
            let first = try LostConnectionTests.waitingBackend(db, besides: [holder.serverProcessID])
            let right = try LedgerProcess.start(["ingest", "--database-url", db.conninfo],
                                                input: ContractLines.consume("P-1") + "\n")
            let second = try LostConnectionTests.waitingBackend(db, besides: [holder.serverProcessID, first])
            let statements = try holder.query("""
                SELECT query FROM pg_stat_activity WHERE pid IN (\(first), \(second))
                """).map { try $0.decode("query", as: String.self) }
            try holder.executeScript(unsafeSQL: "COMMIT")
            let wrongOut = wrong.wait(timeout: 60), rightOut = right.wait(timeout: 60)
            #expect(statements.count == 2 && statements[0] == statements[1], "\(statements)")
            #expect(try IngestResult.all(wrongOut.lines).map { $0.code ?? $0.status } == ["TOKEN_INVALID"])
            #expect(try IngestResult.all(rightOut.lines).map(\.status) == ["consumed"])
        }
    }
}
