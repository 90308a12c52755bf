-- The Citus behaviour behind the registries' router claims (docs/scale-out.md, "A purchase's
-- claims in its 2PC"), in six statements: a table distributed by k, keys 'a' and 'b' on different
-- workers, each key's shard read, then written by an INSERT … SELECT (which Citus runs as a COPY
-- into the shard, over the connection that read it). citus_probe_copy_2pc (citus.sh) runs it with
-- citus.log_remote_commands on and counts the PREPARE TRANSACTIONs: two when this Citus prepares
-- both workers, none when it sends them a plain COMMIT (13.2.2).
SET client_min_messages = warning;
DROP TABLE IF EXISTS copy_2pc_probe;
CREATE TABLE copy_2pc_probe (k text PRIMARY KEY, owner text);
SELECT create_distributed_table('copy_2pc_probe', 'k');
SET citus.log_remote_commands = on;
SET client_min_messages = log;
BEGIN;
SELECT owner FROM copy_2pc_probe WHERE k = 'a';
SELECT owner FROM copy_2pc_probe WHERE k = 'b';
INSERT INTO copy_2pc_probe SELECT 'a', 'u';
INSERT INTO copy_2pc_probe SELECT 'b', 'u';
COMMIT;
SET client_min_messages = warning;
DROP TABLE copy_2pc_probe;
