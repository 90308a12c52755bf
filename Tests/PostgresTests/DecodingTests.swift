import Foundation
import Postgres
import Testing

@Suite("Decoding text-format results")
struct DecodingTests {
    @Test func timestamptzWithAndWithoutFractionalSeconds() async throws {
        try await withTestConnection { connection in
            let row = try connection.query(
                """
                SELECT '2024-02-29 23:59:58+00'::timestamptz AS whole,
                       '2024-02-29 23:59:58.123456+00'::timestamptz AS fraction,
                       '1969-12-31 23:59:59.5-05:30'::timestamptz AS offset,
                       '2024-02-29'::date AS day,
                       'infinity'::timestamptz AS forever
                """)[0]
            let whole = Date(timeIntervalSince1970: 1_709_251_198)
            #expect(try row.decode("whole", as: Date.self) == whole)
            let fraction = try row.decode("fraction", as: Date.self)
            #expect(abs(fraction.timeIntervalSince(whole) - 0.123456) < 1e-6)
            #expect(try row.decode("offset", as: Date.self) == Date(timeIntervalSince1970: 19_799.5))
            #expect(try row.decode("day", as: Date.self) == Date(timeIntervalSince1970: 1_709_164_800))
            let error = try #require(throws: PostgresError.self) { try row.decode("forever", as: Date.self) }
            #expect(error.kind == .decoding)
            #expect(error.message.contains("forever"))
        }
    }

    @Test func dateWithMillisecondsRoundTrips() async throws {
        try await withTestConnection { connection in
            try connection.executeScript(unsafeSQL: "CREATE TABLE events (at timestamptz NOT NULL)")
            let exact = Date(timeIntervalSinceReferenceDate: 737_000_123.456)
            let now = Date()
            try connection.execute("INSERT INTO events (at) VALUES (\(exact)), (\(now))")
            let rows = try connection.query("SELECT at, at::text AS printed FROM events ORDER BY at")
            #expect(try rows[0].decode("at", as: Date.self) == exact)
            #expect(try rows[0].decode("printed", as: String.self) == "2024-05-10 02:15:23.456+00")
            #expect(abs(try rows[1].decode("at", as: Date.self).timeIntervalSince(now)) < 1e-6)
        }
    }

    @Test func scalarsDecode() async throws {
        try await withTestConnection { connection in
            let row = try connection.query(
                """
                SELECT true AS yes, false AS no, 2147483647::int AS int4, 9223372036854775807::bigint AS int8,
                       (-32768)::smallint AS int2, 0.1::float8 AS float, '{"b": [1, 2], "a": null}'::jsonb AS doc,
                       'naïve'::text AS text
                """)[0]
            #expect(try row.decode("yes", as: Bool.self) == true)
            #expect(try row.decode("no", as: Bool.self) == false)
            #expect(try row.decode("int4", as: Int32.self) == .max)
            #expect(try row.decode("int8", as: Int64.self) == .max)
            #expect(try row.decode("int8", as: Int.self) == .max)
            #expect(try row.decode("int2", as: Int16.self) == .min)
            #expect(try row.decode("float", as: Double.self) == 0.1)
            #expect(try row.decode("doc", as: JSONB.self).text == #"{"a": null, "b": [1, 2]}"#)
            #expect(try row.decode("text", as: String.self) == "naïve")
            #expect(try row.decode(7, as: String.self) == "naïve")
            #expect(throws: PostgresError.self) { try row.decode("int8", as: Int32.self) }
        }
    }

    @Test func jsonbParameterRoundTrips() async throws {
        struct Payload: Codable, Equatable { let id: Int; let tags: [String] }
        try await withTestConnection { connection in
            let payload = Payload(id: 7, tags: ["a", "ü"])
            let row = try connection.query("SELECT \(try JSONB(encoding: payload))::jsonb AS doc")[0]
            #expect(try row.decode("doc", as: JSONB.self).decode(Payload.self) == payload)
        }
    }

    @Test func everyByteValueRoundTripsThroughBytea() async throws {
        try await withTestConnection { connection in
            try connection.executeScript(unsafeSQL: "CREATE TABLE blobs (data bytea NOT NULL)")
            let bytes = (0...255).map(UInt8.init) + (0...255).reversed().map(UInt8.init)
            try connection.execute("INSERT INTO blobs (data) VALUES (\(bytes)), (\([UInt8]()))")
            let rows = try connection.query("SELECT data, length(data) AS n FROM blobs ORDER BY n DESC")
            #expect(try rows[0].decode("data", as: [UInt8].self) == bytes)
            #expect(try rows[0].decode("n", as: Int.self) == 512)
            #expect(try rows[1].decode("data", as: [UInt8].self) == [])
            #expect(try connection.query("SELECT \(bytes) AS echoed")[0].decode("echoed", as: [UInt8].self) == bytes)
        }
    }

    @Test func nullDecodesToNilInAnOptionalAndIsAnErrorOtherwise() async throws {
        try await withTestConnection { connection in
            let row = try connection.query("SELECT NULL::text AS nickname, NULL::int AS age, 3 AS present")[0]
            #expect(try row.decode("nickname", as: String?.self) == nil)
            #expect(try row.decode("age", as: Int?.self) == nil)
            #expect(try row.decode("present", as: Int?.self) == 3)
            #expect(row.isNull("age"))
            let error = try #require(throws: PostgresError.self) { try row.decode("age", as: Int.self) }
            #expect(error.kind == .decoding)
            #expect(error.column == "age")
            #expect(error.message.contains("\"age\""))
            #expect(error.message.contains("Int"))
            #expect(error.message.contains("OID 23"))
            let missing = try #require(throws: PostgresError.self) { try row.decode("nope", as: Int.self) }
            #expect(missing.message.contains("nope"))
        }
    }

    @Test func optionalParametersBindNull() async throws {
        try await withTestConnection { connection in
            let none: String? = nil
            let some: String? = "x"
            let row = try connection.query("SELECT \(none)::text AS a, \(some)::text AS b")[0]
            #expect(try row.decode("a", as: String?.self) == nil)
            #expect(try row.decode("b", as: String?.self) == "x")
        }
    }

    @Test func affectedRowsAndColumnsAreReported() async throws {
        try await withTestConnection { connection in
            try connection.executeScript(unsafeSQL: "CREATE TABLE t (n int); INSERT INTO t SELECT generate_series(1, 5)")
            #expect(try connection.execute("UPDATE t SET n = n + 1 WHERE n > \(2)") == 3)
            let rows = try connection.query("SELECT n, n * 2 AS double FROM t ORDER BY n")
            #expect(rows.columns == ["n", "double"])
            #expect(rows.count == 5)
            #expect(try rows.map { try $0.decode("double", as: Int.self) } == [2, 4, 8, 10, 12])
        }
    }
}
