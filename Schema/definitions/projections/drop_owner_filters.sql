-- Makes a projection function again without its owner filters, ` AND (<owners> IS NULL OR
-- <alias>.user_id = ANY (<owners>))`, where p_owner names its parameter that holds the owners of
-- its rows: what the installers do on one server (ledger.distributed_log), where the filters name no
-- shard and would only cost (an index-only scan needs the heap to read the owner, and a
-- generic plan's estimates change). The function must name the parameter nowhere else.
CREATE OR REPLACE FUNCTION ledger.drop_owner_filters(p_function regprocedure, p_owner text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_definition text := regexp_replace(pg_get_functiondef(p_function),
                                        format(' AND \(%s IS NULL OR [a-z]+\.user_id = ANY \(%s\)\)', p_owner, p_owner), '', 'g');
    v_body text := substr(v_definition, strpos(v_definition, 'AS $function$'));
BEGIN
    IF strpos(v_body, p_owner) > 0 THEN
        RAISE EXCEPTION 'drop_owner_filters: % names % other than in a filter', p_function, p_owner;
    END IF;
    EXECUTE v_definition;
END
$$;
REVOKE ALL ON FUNCTION ledger.drop_owner_filters(regprocedure, text) FROM PUBLIC;
