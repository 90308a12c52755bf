-- The queries that ledger.install_distributed_queries makes PL/pgSQL on a distributed log (the
-- SQL-language functions that read the ledger's tables), each with its plan: the reports under
-- custom plans, where their dates and options are constants; one user's subscriptions left to
-- the plan cache (null), which on Citus plans each call for its user, since Citus makes no
-- generic plan of it (forced generic: "could not create distributed plan").
-- DistributionPlanTests holds each to a SQL function of this build.
CREATE OR REPLACE FUNCTION ledger.distributed_queries(OUT fn regprocedure, OUT plan text)
RETURNS SETOF record
LANGUAGE sql STABLE AS $$
VALUES ('ledger.subscriptions_at(timestamptz)'::regprocedure, 'force_custom_plan'),
       ('ledger.user_subscriptions_at(text, timestamptz)', NULL),
       ('analytics.access(timestamptz, timestamptz, boolean)', 'force_custom_plan'),
       ('analytics.backlog(timestamptz, boolean)', 'force_custom_plan'),
       ('analytics.churn(date, date, text, boolean)', 'force_custom_plan'),
       ('analytics.refunds(date, date, text, boolean)', 'force_custom_plan'),
       ('analytics.revenue(date, date, text, boolean)', 'force_custom_plan'),
       ('analytics.subscribers(date, date, text, boolean)', 'force_custom_plan'),
       ('ledger.chain_breaks()', NULL)
$$;
REVOKE ALL ON FUNCTION ledger.distributed_queries() FROM PUBLIC;
