-- On a log distributed on a Citus cluster (ledger.distributed_log), the SQL-language functions
-- of ledger.distributed_queries become PL/pgSQL functions of the same name, arguments, result and
-- text, their statement run by RETURN QUERY. Citus plans no statement that reads a distributed
-- table through a SQL-language function, inlined or not (docs/scale-out.md, "The queries on a
-- distributed ledger"); a PL/pgSQL function's statement it plans. One server keeps them SQL,
-- which the planner inlines into the caller's statement: as PL/pgSQL there a month of churn took
-- 6.9 times as long and one user's subscriptions about 1.15 times (the caller's filters and
-- parallel plans stop at a PL/pgSQL function; BENCHMARKS.md, "Sets and queries on a distributed
-- ledger"). So the text stays one and only the wrapper differs, as project_range is made from
-- project_positions' text (install_project_range.sql). The statements' output columns share
-- names with the tables' columns, which they mean (#variable_conflict use_column). Returns the
-- functions it made PL/pgSQL this time. Idempotent; run when the definitions are applied and
-- after the log is distributed (scripts/citus.sh, citus_distribute_plan).
CREATE OR REPLACE FUNCTION ledger.install_distributed_queries() RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
    q       record;
    v_head  text;     -- the function's definition up to its text, as pg_get_functiondef writes it
    v_text  text;     -- its statement
    v_made  text[] := '{}';
BEGIN
    IF NOT ledger.distributed_log() THEN
        RETURN v_made;
    END IF;
    FOR q IN SELECT f.fn, f.plan, p.prosrc
               FROM ledger.distributed_queries() AS f
               JOIN pg_proc p ON p.oid = f.fn
               JOIN pg_language l ON l.oid = p.prolang
              WHERE l.lanname = 'sql' LOOP
        v_head := pg_get_functiondef(q.fn);
        IF strpos(v_head, E'\n LANGUAGE sql\n') = 0 OR strpos(v_head, E'\nAS $function$') = 0 THEN
            RAISE EXCEPTION 'install_distributed_queries: % is not written as pg_get_functiondef was expected to write it', q.fn;
        END IF;
        v_head := replace(left(v_head, strpos(v_head, E'\nAS $function$')), E'\n LANGUAGE sql\n', E'\n LANGUAGE plpgsql\n');
        v_text := rtrim(q.prosrc, E' \t\n;');
        EXECUTE v_head
             || CASE WHEN q.plan IS NOT NULL THEN format(E' SET plan_cache_mode = %s\n', q.plan) ELSE '' END
             || E'AS $function$\n#variable_conflict use_column\nBEGIN\nRETURN QUERY\n'
             || v_text || E';\nEND\n$function$';
        v_made := v_made || q.fn::text;
    END LOOP;
    RETURN v_made;
END
$$;
REVOKE ALL ON FUNCTION ledger.install_distributed_queries() FROM PUBLIC;
SELECT ledger.install_distributed_queries();
