-- A refusal: the contract's error code and a message naming the field or the payment.
CREATE OR REPLACE FUNCTION ledger.rejected(p_code text, p_message text, p_payment_seq text DEFAULT NULL)
RETURNS ledger.command_result
LANGUAGE sql IMMUTABLE
RETURN ROW('rejected', p_code, p_message, p_payment_seq, NULL, NULL, NULL)::ledger.command_result;
