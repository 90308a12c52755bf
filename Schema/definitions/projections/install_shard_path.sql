-- Makes a projection function again with a path on its owners' shard tables: what the installers
-- do on a Citus cluster (ledger.distributed_log) for refresh_spans and refresh_states, the two
-- statements of a command that Citus plans anew on every call and that take half of a command's
-- time on the worker (BENCHMARKS.md, "Where a worker's time goes, statement by statement").
--
-- p_function: a PL/pgSQL function whose body is a sequence of SQL statements (no variables, no
-- control flow), of the unqualified tables p_tables of its own schema; p_owners: its parameter
-- holding the owners of the rows it writes, all of one shard. The function made runs, first,
-- ledger.owner_shard_tables: when this node holds that shard and the transaction runs it in this
-- backend, each statement runs as a prepared statement of this session on the shard's own tables
-- (named by the function, the schema and the shard: a shard moved by the rebalancer has a new id,
-- so a new statement, and the old one is never run again), which PostgreSQL plans once per
-- session as one server plans the function's statements; else the statements as they were,
-- through Citus. The statements' text is the function's own, with each table named by its shard
-- and each parameter as $n: one definition, as project_range is made from project_positions.
CREATE OR REPLACE FUNCTION ledger.install_shard_path(p_function regprocedure, p_owners text, p_tables text[])
RETURNS void
LANGUAGE plpgsql AS $install$
DECLARE
    v_definition text := pg_get_functiondef(p_function);
    v_open       integer := strpos(v_definition, 'AS $function$') + length('AS $function$');
    v_body       text;
    v_schema     text;
    v_function   text;
    v_args       text[];
    v_types      text[];
    v_statements text[];
    v_statement  text;
    v_prepare    text := '';
    v_execute    text;
    v_path       text;
    i            integer;
    k            integer;
BEGIN
    SELECT n.nspname, p.proname, p.proargnames,
           ARRAY(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) WITH ORDINALITY AS u(t, o) ORDER BY o)
      INTO v_schema, v_function, v_args, v_types
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.oid = p_function;
    v_body := substr(v_definition, v_open, strpos(substr(v_definition, v_open), '$function$') - 1);
    IF strpos(v_body, 'owner_shard_tables') > 0 THEN
        RETURN;  -- made already
    END IF;
    -- The statements: the body's BEGIN … END without comments, cut at each ';' that ends a line.
    v_statements := ARRAY(
        SELECT btrim(s, E' \n\t') FROM regexp_split_to_table(
                   regexp_replace(regexp_replace(regexp_replace(v_body, '--[^\n]*', '', 'g'),
                                                 '^\s*BEGIN\M', ''), '\mEND\s*$', ''),
                   E';\\s*\\n') AS s
         WHERE btrim(s, E' \n\t') <> '');
    IF cardinality(v_statements) = 0 OR EXISTS (
           SELECT FROM unnest(v_statements) AS s WHERE s !~* '^(DELETE|INSERT|UPDATE|WITH)\M') THEN
        RAISE EXCEPTION 'install_shard_path: % is not a sequence of statements', p_function;
    END IF;

    v_path := format(E'        shard_tables := ledger.owner_shard_tables(%L, %L, %I);\n', v_schema, p_tables, p_owners)
           || E'        IF shard_tables IS NOT NULL THEN\n'
           || format(E'            shard_statement := %L || substring(shard_tables[1] FROM ''_([0-9]+)$'');\n',
                     left(v_schema || '_' || v_function, 40) || '_')
           || E'            IF NOT EXISTS (SELECT FROM pg_prepared_statements WHERE name = shard_statement || ''_1'') THEN\n';
    FOR i IN 1 .. cardinality(v_statements) LOOP
        -- A literal '%' stays one through format(); each table becomes its shard's name (%k$s, the
        -- statement's name being %1$I), each parameter $n.
        v_statement := replace(v_statements[i], '%', '%%');
        FOR k IN 1 .. cardinality(p_tables) LOOP
            v_statement := regexp_replace(v_statement, format('\m(FROM|JOIN|INTO|USING|UPDATE)\s+%s\M', p_tables[k]),
                                          format('\1 %%%s$s', k + 1), 'gi');
            IF v_statement ~ format('\m%s\M', p_tables[k]) THEN
                RAISE EXCEPTION 'install_shard_path: % names % other than as a table', p_function, p_tables[k];
            END IF;
        END LOOP;
        FOR k IN 1 .. cardinality(v_args) LOOP
            v_statement := regexp_replace(v_statement, format('\m%s\M', v_args[k]), '$' || k, 'g');
        END LOOP;
        IF strpos(v_statement, '$shard$') > 0 THEN
            RAISE EXCEPTION 'install_shard_path: % holds $shard$', p_function;
        END IF;
        v_path := v_path
               || format(E'                EXECUTE format(''PREPARE %%1$I(%s) AS '' || $shard$%s$shard$,\n',
                         array_to_string(v_types, ', '), v_statement)
               || format(E'                               VARIADIC ARRAY[shard_statement || ''_%s''] || shard_tables);\n', i);
        v_execute := coalesce(v_execute, '')
               || format(E'            EXECUTE format(''EXECUTE %%I(%s)'', shard_statement || ''_%s'', %s);\n',
                         array_to_string(array_fill('%L'::text, ARRAY[cardinality(v_args)]), ', '), i,
                         array_to_string(ARRAY(SELECT format('%I', a) FROM unnest(v_args) AS a), ', '));
    END LOOP;
    v_path := v_path || E'            END IF;\n' || v_execute || E'            RETURN;\n        END IF;\n';

    EXECUTE substr(v_definition, 1, v_open - 1)
         || E'\n    DECLARE\n        shard_tables text[];\n        shard_statement text;\n    BEGIN\n'
         || v_path
         || regexp_replace(v_body, '^\s*BEGIN\M', '')
         || '$function$';
END
$install$;
REVOKE ALL ON FUNCTION ledger.install_shard_path(regprocedure, text, text[]) FROM PUBLIC;
