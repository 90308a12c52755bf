-- On a log distributed by owner, an event's `tx` and `position` are those of the node that stores
-- it, the owner's worker, whichever node ran the command (docs/scale-out.md, "A user's events in
-- one node group"). Citus evaluates an insert's defaults and identity on the node that
-- runs the statement, so an append run elsewhere (a refund routed by `''` that found its owner
-- under the keys' locks, a command of a client connected to another worker, a product's
-- declaration through the coordinator) would take that node's transaction id and range: the
-- user's events would come from two node groups, which the readers do not order against each
-- other, and a webhook could tell a consume before its purchase. This trigger runs on the shard,
-- in the owner's node's part of the transaction: the id is that node's (a prepared part keeps
-- the node's horizon below it until Citus commits it there) and the position is from that
-- node's range, taken at the insert. It fires only for the appends' rows, whose `tx` default
-- is 0 on a distributed log (ledger.install_appends_on_owner_nodes): a shard's rows copied by a
-- move or a rebalance keep what they have. One server has neither the trigger nor that default.
CREATE OR REPLACE FUNCTION ledger.event_on_owner_node() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.tx := pg_current_xact_id();
    NEW.position := nextval('ledger.events_position_seq'::regclass);
    RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION ledger.event_on_owner_node() FROM PUBLIC;
