-- The one typed form in which commands cross into the database: the library binds an array of
-- them to ledger.execute_commands, the one entry point that derives their lock keys, takes them
-- in the one global order, plans the rounds and applies each command's rules. One type for
-- every kind; a kind reads the fields it names (docs/design.md, "The write path"):
--   purchase, renewal  data (the payment's fields under their contract names, the token as
--                      purchaseTokenSha256), job (the store check it brings, or null)
--   consume            payment_seq, user_id, token_sha256 (null: a payment learned from a
--                      store, which has no token), at
--   refund             payment_seq, at, reason
--   cancel             store_code, original_transaction_id, at
--   restore            user_id, store_code, at, data (its items: [{"kind", "data"}, ...])
--   notification       data (what the verified notification says, its job included)
--   product            store_code, product_id, product_type, price, currency
--   accountLink        user_id, store_code, app_account_token
-- The payment's fields stay one jsonb value: the field rules (ledger.field_rules) are stated
-- over the contract's names, and a direct caller's payment arrives in that form too.
CREATE TYPE ledger.command AS (
    kind                    text,
    data                    jsonb,
    job                     jsonb,
    payment_seq             text,
    user_id                 text,
    store_code              text,
    token_sha256            bytea,
    at                      timestamptz,
    reason                  text,
    original_transaction_id text,
    product_id              text,
    product_type            text,
    price                   numeric,
    currency                text,
    app_account_token       text
);
