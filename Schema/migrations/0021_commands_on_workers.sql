-- The entry point runs on the users' workers of a Citus cluster (ledger.execute_user_commands),
-- so the appends no longer refuse a worker's position, and what follows from commands on the
-- workers (the keys' row locks, the workers' horizons, their writers' gates) asks
-- ledger.commands_on_workers(), which the definitions make. The old switch goes.
DROP FUNCTION IF EXISTS ledger.appended_through_the_coordinator(bigint);
