-- `ledger webhooks replay --from` takes a position per node group (CatchUpReader): one position
-- compared with every delivery would replay every worker group's deliveries, whose positions,
-- from g * 2^48 + 1, are above every position of group 0's whatever their time. The function
-- takes an array; the definitions create it again.
DROP FUNCTION IF EXISTS ledger.webhook_replay(bigint, bigint);
