import CLibPQ

/// What stops a connection's running statement from another thread: libpq's cancel object for
/// that connection (`PQgetCancel`), sent with `PQcancel`.
///
/// The server gets the request on a connection of its own and interrupts the statement, which
/// then fails with SQLSTATE 57014 (`query_canceled`); the connection stays usable. A request
/// that arrives while the connection is idle is ignored by the server.
final class CancelKey: @unchecked Sendable {
    // @unchecked: it owns a `PGcancel *`, which libpq documents as safe to use from any thread
    // with `PQcancel` while the connection itself is in use on another; it is freed only in
    // `deinit`, when no thread can hold it any more.
    private let key: OpaquePointer

    /// The connection's cancel object (`PQgetCancel`); nil when libpq cannot make one.
    init?(_ handle: OpaquePointer) {
        guard let key = PQgetCancel(handle) else { return nil }
        self.key = key
    }

    deinit {
        PQfreeCancel(key)
    }

    /// Asks the server to cancel what the connection runs now (`PQcancel`, which blocks until the
    /// server took the request); nil when sent, else libpq's reason.
    func send() -> String? {
        var reason = [CChar](repeating: 0, count: 256)
        return PQcancel(key, &reason, Int32(reason.count)) == 1 ? nil : String(cString: reason)
    }
}
