-- `product` line: the type of a store product, and optionally its price (docs/contract.md §6.3: the
-- price of a Google one-time purchase, which the Play Developer API does not say). The latest
-- declaration stands; the same one again is a duplicate.
DROP FUNCTION IF EXISTS ledger.declare_product(text, text, text);
CREATE OR REPLACE FUNCTION ledger.declare_product(p_store_code text, p_product_id text, p_product_type text,
                                                  p_price numeric, p_currency text)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    v_known text;
    v_pos   bigint;
    p       record;
    k       ledger.command;
BEGIN
    -- The writers' gate first (ledger.writers_gate), as every command takes it.
    PERFORM pg_advisory_xact_lock_shared(ledger.writers_gate());
    IF coalesce(p_store_code, '') NOT IN ('AS', 'GG') THEN
        RETURN ledger.rejected('UNKNOWN_STORE', format('unknown store %s', p_store_code));
    ELSIF coalesce(p_product_type, '') NOT IN ('CONSUMABLE', 'AUTO_RENEWABLE', 'CONSUMABLE_AUTO_RENEWABLE') THEN
        RETURN ledger.rejected('UNKNOWN_PRODUCT_TYPE', format('unknown product type %s', p_product_type));
    ELSIF coalesce(p_product_id, '') = '' THEN
        RETURN ledger.rejected('INVALID_INPUT', 'productId: missing');
    ELSIF (p_price IS NULL) <> (p_currency IS NULL) THEN
        RETURN ledger.rejected('INVALID_INPUT', CASE WHEN p_price IS NULL THEN 'price: missing (currency is given)'
                                                     ELSE 'currency: missing (price is given)' END);
    ELSIF p_price < 0 THEN
        RETURN ledger.rejected('INVALID_INPUT', format('price: must not be negative, got %s', p_price));
    END IF;
    k.kind := 'product';
    k.store_code := p_store_code;
    k.product_id := p_product_id;
    PERFORM ledger.lock_keys(ledger.command_lock_keys(k));
    SELECT * INTO p FROM ledger.products WHERE store_code = p_store_code AND product_id = p_product_id;
    IF FOUND AND p.product_type = p_product_type AND p.price IS NOT DISTINCT FROM p_price
       AND p.currency IS NOT DISTINCT FROM p_currency THEN
        RETURN ROW('duplicate', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
    END IF;
    SELECT product_type INTO v_known FROM ledger.payments
     WHERE store_code = p_store_code AND product_id = p_product_id AND product_type <> p_product_type LIMIT 1;
    IF FOUND THEN
        RETURN ledger.rejected('PRODUCT_INVALID',
            format('product %s of store %s already has payments as %s', p_product_id, p_store_code, v_known));
    END IF;
    v_pos := ledger.append('product:' || p_store_code || ':' || p_product_id, 'ProductDeclared',
                           jsonb_strip_nulls(jsonb_build_object('storeCode', p_store_code, 'productId', p_product_id,
                                              'productType', p_product_type, 'price', p_price::text,
                                              'currency', p_currency)), now());
    PERFORM ledger.project_positions(ARRAY[v_pos], '');
    RETURN ROW('recorded', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
END
$$;
REVOKE ALL ON FUNCTION ledger.declare_product(text, text, text, numeric, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.declare_product(text, text, text, numeric, text) TO ledger_writer;
