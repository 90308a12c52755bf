import Postgres

extension Connection {
    /// Calls `ledger.<function>(route)` once for each worker group of a Citus coordinator whose
    /// log is distributed, each call a statement of its own, with a key whose shard of the log
    /// lives on that worker (`ledger.worker_routes()`). Citus runs such a function, distributed by
    /// its argument, colocated with the log and with `force_delegation`, on that worker as a part
    /// of this connection's transaction (a call made inside a function it would run here). Each
    /// call answers the group it ran on; when that is another group (a shard moved),
    /// `mismatch(group, route, answered)` is thrown. Nothing is called on one server, on a
    /// worker, or while the log is not distributed.
    func callOnEachWorker(_ function: String, mismatch: (_ group: Int, _ route: String, _ answered: Int) -> Error) throws {
        for row in try query("SELECT node_group, route FROM ledger.worker_routes() WHERE route IS NOT NULL") {
            let group: Int = try row.decode("node_group")
            let route: String = try row.decode("route")
            let answered = try query("SELECT ledger.\(unsafeSQL: function)(\(route)) AS g")[0].decode("g", as: Int.self)
            guard answered == group else { throw mismatch(group, route, answered) }
        }
    }
}
