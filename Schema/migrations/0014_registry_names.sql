-- Each key of the payments' registry names its payment (names_seq: itself, or the payment an
-- alias names), and each store transaction's registry row its payment (payment_seq), so that a
-- command finds the payment by one probe of the registry and the owner's primary key
-- (ledger.payment_resolved, ledger.payment_found). Live registries get the columns here, filled
-- from the payments and aliases in the migration's transaction: the definitions applied next
-- write them at once (ledger migrate checks the shapes agree), until the rebuild that follows
-- replaces the tables with ones replayed from the log. Registries made by this release's
-- definitions, or none yet, need nothing.
DO $names$
BEGIN
    IF to_regclass('ledger.payment_keys') IS NULL THEN
        RETURN;
    END IF;
    IF EXISTS (SELECT FROM pg_attribute
                WHERE attrelid = 'ledger.payment_keys'::regclass AND attname = 'names_seq' AND NOT attisdropped) THEN
        RETURN;
    END IF;

    ALTER TABLE ledger.payment_keys ADD COLUMN names_seq text;
    UPDATE ledger.payment_keys k
       SET names_seq = coalesce((SELECT a.payment_seq FROM ledger.payment_aliases a
                                  WHERE a.alias_seq = k.payment_seq AND a.user_id = k.user_id), k.payment_seq);
    ALTER TABLE ledger.payment_keys ALTER COLUMN names_seq SET NOT NULL;

    ALTER TABLE ledger.transaction_keys ADD COLUMN payment_seq text;
    UPDATE ledger.transaction_keys k
       SET payment_seq = p.payment_seq
      FROM ledger.payments p
     WHERE p.store_code = k.store_code AND p.transaction_id = k.transaction_id AND p.user_id = k.user_id;
    ALTER TABLE ledger.transaction_keys ALTER COLUMN payment_seq SET NOT NULL;
END
$names$;
