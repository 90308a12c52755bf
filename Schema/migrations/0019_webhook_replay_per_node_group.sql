-- `ledger webhooks replay --from` takes a position per node group (CatchUpReader): a replay from
-- a position compared every delivery with it, and a worker group's positions, from g * 2^48 + 1,
-- are above every position of group 0's whatever their time. The function takes an array; the
-- definitions create it again.
DROP FUNCTION IF EXISTS ledger.webhook_replay(bigint, bigint);
