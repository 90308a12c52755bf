import Testing

/// The reliability and security suites: races, crashes, hostile input, least privilege
/// and secrets, each proven by a test that can fail.
///
/// The suites that start many `ledger` processes or a PostgreSQL cluster of their own are nested
/// here and run one after another, so that they do not starve each other (and their time limits)
/// on a small machine; the other suites of the package still run beside them.
@Suite("Reliability under load", .serialized)
struct HeavyReliabilityTests {}
