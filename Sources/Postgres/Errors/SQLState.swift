/// A five-character SQLSTATE code, as reported by `PQresultErrorField(result, PG_DIAG_SQLSTATE)`.
///
/// Match it in `catch`: `catch let error as PostgresError where error.sqlState == .uniqueViolation`.
public struct SQLState: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code itself, for example `"23505"`.
    public let rawValue: String

    /// Wraps a code such as `"23505"`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Wraps a code such as `"23505"`.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// The code, for example `23505`.
    public var description: String { rawValue }

    /// The two-character class, for example `"23"` for integrity constraint violations.
    public var errorClass: String { String(rawValue.prefix(2)) }

    /// True for class 08 (connection exception) and 57P01–57P03 (the server is going away):
    /// after such an error the connection cannot be used again.
    public var isConnectionClass: Bool {
        errorClass == "08" || self == .adminShutdown || self == .crashShutdown || self == .cannotConnectNow
    }

    /// 53200 `out_of_memory`: the server's shared memory, such as its lock table, is full.
    public static let outOfSharedMemory = SQLState("53200")
    /// 26000 `invalid_sql_statement_name`: no prepared statement of that name.
    public static let invalidStatementName = SQLState("26000")
    /// 0A000 `feature_not_supported` (also "cached plan must not change result type").
    public static let featureNotSupported = SQLState("0A000")
    /// 23505 `unique_violation`.
    public static let uniqueViolation = SQLState("23505")
    /// 23503 `foreign_key_violation`.
    public static let foreignKeyViolation = SQLState("23503")
    /// 23514 `check_violation`.
    public static let checkViolation = SQLState("23514")
    /// 23502 `not_null_violation`.
    public static let notNullViolation = SQLState("23502")
    /// 40001 `serialization_failure`.
    public static let serializationFailure = SQLState("40001")
    /// 40P01 `deadlock_detected`.
    public static let deadlockDetected = SQLState("40P01")
    /// 57P01 `admin_shutdown` (also what `pg_terminate_backend` sends).
    public static let adminShutdown = SQLState("57P01")
    /// 57P02 `crash_shutdown`.
    public static let crashShutdown = SQLState("57P02")
    /// 57P03 `cannot_connect_now`.
    public static let cannotConnectNow = SQLState("57P03")
    /// XX000 `internal_error` (also what Citus reports when a worker's connection broke under a
    /// statement: libpq's own message, relayed).
    public static let internalError = SQLState("XX000")
    /// 58030 `io_error` (also what Citus reports when a worker went away under a COPY to one
    /// of its shards: "failed to COPY to shard …").
    public static let ioError = SQLState("58030")
    /// 57014 `query_canceled` (also statement timeouts).
    public static let queryCanceled = SQLState("57014")
    /// 42501 `insufficient_privilege`.
    public static let insufficientPrivilege = SQLState("42501")
    /// 42P01 `undefined_table`.
    public static let undefinedTable = SQLState("42P01")
    /// 42883 `undefined_function`.
    public static let undefinedFunction = SQLState("42883")
    /// 55000 `object_not_in_prerequisite_state`.
    public static let objectNotInPrerequisiteState = SQLState("55000")
    /// 55P03 `lock_not_available`.
    public static let lockNotAvailable = SQLState("55P03")
    /// P0001 `raise_exception` (a PL/pgSQL `RAISE EXCEPTION`).
    public static let raiseException = SQLState("P0001")
}
