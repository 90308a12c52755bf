import Testing

/// Every suite of `ledger serve`, one test at a time: each starts a server whose handlers need
/// Swift's cooperative threads, which the other tests' synchronous database set-up would
/// otherwise hold for seconds on a 2-core machine.
@Suite(.serialized) struct LedgerServerTests {}
