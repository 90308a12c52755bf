extension ConnectionPool {
    /// The pool at this instant, for metrics.
    public struct Statistics: Sendable, Hashable {
        /// Connections open or being opened, idle or checked out.
        public var open: Int
        /// Open connections waiting for a caller.
        public var idle: Int
        /// Callers waiting for a connection.
        public var waiting: Int
        /// Connections checked out by callers.
        public var inUse: Int { open - idle }
    }

    /// How many connections are open, idle, and how many callers wait (one lock, no I/O).
    public var statistics: Statistics {
        state.withLock { Statistics(open: $0.open, idle: $0.idle.count, waiting: $0.waiters.count) }
    }
}
