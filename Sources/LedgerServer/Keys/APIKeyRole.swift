/// What an API key may do. Each route of `ledger serve` names the roles it takes.
public enum APIKeyRole: String, Sendable, Hashable, CaseIterable {
    /// The contract's commands (`POST /v1/...`) and every query and report.
    case writer
    /// Queries and analytics reports only (`GET /v1/...`).
    case reader
    /// The store webhook routes (`POST /notifications/...`), for a relay that forwards them.
    case notifications
}
