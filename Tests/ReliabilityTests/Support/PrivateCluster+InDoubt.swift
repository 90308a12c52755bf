import Foundation
import LedgerTestSupport
import Postgres

extension PrivateCluster {
    /// On this Citus coordinator, makes the state Citus leaves between a 2PC transaction's commit
    /// on the coordinator and its worker's `COMMIT PREPARED` (a moment, or until Citus's recovery
    /// after a crash), with one event of `owner`:
    /// - on the worker that holds `owner`'s shard of the log, the event inserted in a transaction
    ///   prepared under a name of Citus's form (`citus_` the coordinator's group 0, a backend, a
    ///   transaction number, a connection), so that Citus's recovery finishes it;
    /// - on the coordinator, a committed transaction, whose id is the event's `tx` and whose
    ///   position comes from the log's sequence, that wrote Citus's record of the prepared
    ///   transaction into `pg_dist_transaction` (`outer_xid` 0), as Citus's commit does.
    /// `data` is the event's JSON; the hashes are placeholders (no chain is checked). Returns the
    /// event's position and `tx`. Run it with Citus's recovery off, or it commits the event within
    /// its interval.
    ///
    /// With `onTheOwnersNode`, the event is appended as a distributed log's appends are now
    /// (`ledger.event_on_owner_node`): its `tx` and position are the worker's, given by the
    /// shard's trigger in the prepared transaction, and the coordinator's transaction only
    /// writes the record. Without it, as a release before that appended: the coordinator's
    /// transaction id and a position of the coordinator's range, which the trigger leaves alone.
    func commitOnTheCoordinatorOnly(owner: String, stream: String, type: String, data: String,
                                    onTheOwnersNode: Bool = false) throws -> (position: Int64, tx: String) {
        let coordinator = try connect()
        defer { coordinator.close() }
        let placement = try coordinator.query("""
            SELECT s.shardid, n.groupid, n.nodeport
              FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid) JOIN pg_dist_node n USING (groupid)
             WHERE s.shardid = get_shard_id_for_distribution_column('ledger.events', \(owner)::text)
            """)[0]
        let shard: Int64 = try placement.decode("shardid"), group: Int32 = try placement.decode("groupid")
        let port: Int32 = try placement.decode("nodeport")
        guard let node = workers.first(where: { $0.port == Int(port) }) else {
            throw TestSetupError("no worker of this cluster listens on \(port)")
        }
        let worker = try node.connect()
        defer { worker.close() }
        try coordinator.executeScript(unsafeSQL: "BEGIN")
        let ids = try coordinator.query("""
            SELECT pg_current_xact_id()::text AS tx, nextval(pg_get_serial_sequence('ledger.events', 'position')) AS position,
                   pg_backend_pid() AS pid
            """)[0]
        let tx = try ids.decode("tx", as: String.self), position: Int64 = try ids.decode("position")
        let gid = "citus_0_\(try ids.decode("pid", as: Int32.self))_\(position)_0"
        try worker.executeScript(unsafeSQL: "BEGIN")
        var appended = (position: position, tx: tx)
        if onTheOwnersNode {
            let row = try worker.query("""
                INSERT INTO \(identifier: "ledger").\(identifier: "events_\(shard)")
                       (stream, version, type, data, occurred_at, prev_hash, hash, user_id, tx)
                VALUES (\(stream), 1, \(type), \(data)::jsonb, now(), '\\x', '\\x00', \(owner), '0')
                RETURNING position, tx::text AS tx
                """)[0]
            appended = (try row.decode("position"), try row.decode("tx"))
        } else {
            try worker.execute("""
                INSERT INTO \(identifier: "ledger").\(identifier: "events_\(shard)")
                       (position, stream, version, type, data, occurred_at, prev_hash, hash, user_id, tx)
                OVERRIDING SYSTEM VALUE
                VALUES (\(position), \(stream), 1, \(type), \(data)::jsonb, now(), '\\x', '\\x00', \(owner), \(tx)::xid8)
                """)
        }
        try worker.executeScript(unsafeSQL: "PREPARE TRANSACTION '\(gid)'")  // gid: digits and underscores
        try coordinator.query("INSERT INTO pg_dist_transaction (groupid, gid, outer_xid) VALUES (\(group), \(gid), '0')")
        try coordinator.executeScript(unsafeSQL: "COMMIT")
        return appended
    }
}
