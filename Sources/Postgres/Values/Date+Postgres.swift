import Foundation

/// `Date` is `timestamptz`: bound as `YYYY-MM-DD HH:MM:SS.ffffff+00`, read from ISO DateStyle output.
extension Date: PostgresEncodable, PostgresDecodable {
    /// Binds the instant in UTC, as the microsecond it stands for (`unixMicroseconds`).
    public func postgresValue() throws -> PostgresValue {
        let sinceReference = timeIntervalSinceReferenceDate * 1_000_000
        guard sinceReference.isFinite, abs(sinceReference) < PostgresTimestamp.limitMicros else {
            throw PostgresError.encoding("a Date is outside the range PostgreSQL timestamps can hold")
        }
        return .text(PostgresTimestamp.text(microseconds: unixMicroseconds))
    }

    /// Parses `timestamptz` (`2024-05-01 12:30:00.25+00`), `timestamp` (read as UTC) and `date` output;
    /// `infinity` and `-infinity` are decoding errors.
    public init(postgresText: UnsafeBufferPointer<UInt8>, type: UInt32, column: String) throws {
        guard let micros = PostgresTimestamp.microseconds(parsing: postgresText) else {
            throw PostgresError.decoding(
                column: column, type: type, as: Date.self, "expected an ISO timestamp (infinity has no Date)")
        }
        self = Date(unixMicroseconds: micros)
    }
}
