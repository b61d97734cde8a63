-- Payments functions, triggers and views. Functions are owned by ledger_owner (set at the end).

-- The ledger is append-only: corrections are reversal entries, never edits.
CREATE FUNCTION payments.forbid_ledger_rewrite() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'payments.% is append-only: post a reversal entry instead', TG_TABLE_NAME
        USING ERRCODE = 'integrity_constraint_violation';
END
$$;

CREATE TRIGGER journal_entries_append_only
    BEFORE UPDATE OR DELETE ON payments.journal_entries
    FOR EACH ROW EXECUTE FUNCTION payments.forbid_ledger_rewrite();
CREATE TRIGGER journal_entries_no_truncate
    BEFORE TRUNCATE ON payments.journal_entries
    FOR EACH STATEMENT EXECUTE FUNCTION payments.forbid_ledger_rewrite();
CREATE TRIGGER journal_lines_append_only
    BEFORE UPDATE OR DELETE ON payments.journal_lines
    FOR EACH ROW EXECUTE FUNCTION payments.forbid_ledger_rewrite();
CREATE TRIGGER journal_lines_no_truncate
    BEFORE TRUNCATE ON payments.journal_lines
    FOR EACH STATEMENT EXECUTE FUNCTION payments.forbid_ledger_rewrite();

-- Nothing posts into a closed month.
CREATE FUNCTION payments.check_period_open() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM payments.ledger_periods
               WHERE period_start = date_trunc('month', NEW.effective_date)::date
                 AND status = 'closed') THEN
        RAISE EXCEPTION 'ledger period % is closed; post with a current effective_date',
            to_char(NEW.effective_date, 'YYYY-MM')
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER journal_entries_period_open
    BEFORE INSERT ON payments.journal_entries
    FOR EACH ROW EXECUTE FUNCTION payments.check_period_open();

-- Every entry balances per currency and has at least two lines, checked at commit.
CREATE FUNCTION payments.check_entry_balanced() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    bad record;
BEGIN
    SELECT l.currency, sum(l.signed_cents) AS net, count(*) AS n INTO bad
    FROM payments.journal_lines l
    WHERE l.entry_id = NEW.entry_id
    GROUP BY l.currency
    HAVING sum(l.signed_cents) <> 0 OR count(*) < 2
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'journal entry % does not balance in % (net %, % line(s))',
            NEW.entry_id, bad.currency, bad.net, bad.n
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER journal_lines_balanced
    AFTER INSERT ON payments.journal_lines
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION payments.check_entry_balanced();

-- Running balances in the account's normal direction.
CREATE FUNCTION payments.apply_line_to_balance() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    delta bigint;
BEGIN
    SELECT CASE a.normal_balance WHEN 'D' THEN NEW.signed_cents ELSE -NEW.signed_cents END
    INTO delta
    FROM payments.ledger_accounts a WHERE a.id = NEW.account_id;

    INSERT INTO payments.account_balances AS b (account_id, balance_cents, last_entry_id, updated_at)
    VALUES (NEW.account_id, delta, NEW.entry_id, now())
    ON CONFLICT (account_id) DO UPDATE
        SET balance_cents = b.balance_cents + EXCLUDED.balance_cents,
            last_entry_id = greatest(b.last_entry_id, EXCLUDED.last_entry_id),
            updated_at = now();
    RETURN NULL;
END
$$;
CREATE TRIGGER journal_lines_apply_balance
    AFTER INSERT ON payments.journal_lines
    FOR EACH ROW EXECUTE FUNCTION payments.apply_line_to_balance();

-- Keep payment_intents.amount_refunded_cents equal to the sum of its succeeded refunds.
CREATE FUNCTION payments.sync_intent_refunded() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE payments.payment_intents i
    SET amount_refunded_cents = (SELECT coalesce(sum(r.amount_cents), 0)
                                 FROM payments.refunds r
                                 WHERE r.intent_id = NEW.intent_id AND r.status = 'succeeded')
    WHERE i.id = NEW.intent_id;
    RETURN NULL;
END
$$;
CREATE TRIGGER refunds_sync_intent
    AFTER INSERT OR UPDATE OF status, amount_cents ON payments.refunds
    FOR EACH ROW EXECUTE FUNCTION payments.sync_intent_refunded();

CREATE TRIGGER merchant_settings_updated_at BEFORE UPDATE ON payments.merchant_settings
    FOR EACH ROW EXECUTE FUNCTION public.set_updated_at();
CREATE TRIGGER payment_intents_updated_at BEFORE UPDATE ON payments.payment_intents
    FOR EACH ROW EXECUTE FUNCTION public.set_updated_at();
CREATE TRIGGER refunds_updated_at BEFORE UPDATE ON payments.refunds
    FOR EACH ROW EXECUTE FUNCTION public.set_updated_at();
CREATE TRIGGER disputes_updated_at BEFORE UPDATE ON payments.disputes
    FOR EACH ROW EXECUTE FUNCTION public.set_updated_at();
CREATE TRIGGER payouts_updated_at BEFORE UPDATE ON payments.payouts
    FOR EACH ROW EXECUTE FUNCTION public.set_updated_at();

-- Posting API used by ledger_writer: one call, one balanced entry.
-- p_lines: [{"account_id": 12, "direction": "D", "amount_cents": 1000, "memo": "..."}, ...]
CREATE FUNCTION payments.post_entry(p_type payments.entry_type, p_effective_date date,
    p_description text, p_source_table text, p_source_id bigint, p_idempotency_key uuid,
    p_lines jsonb, p_reversal_of bigint DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    SELECT id INTO v_id FROM payments.journal_entries WHERE idempotency_key = p_idempotency_key;
    IF FOUND THEN
        RETURN v_id;  -- replay of a request we already posted
    END IF;

    INSERT INTO payments.journal_entries (entry_type, effective_date, description, source_table,
                                          source_id, idempotency_key, reversal_of)
    VALUES (p_type, p_effective_date, p_description, p_source_table, p_source_id,
            p_idempotency_key, p_reversal_of)
    RETURNING id INTO v_id;

    INSERT INTO payments.journal_lines (entry_id, line_no, account_id, direction, amount_cents,
                                        currency, memo)
    SELECT v_id, l.ord::smallint, (l.line->>'account_id')::int, l.line->>'direction',
           (l.line->>'amount_cents')::bigint, a.currency, l.line->>'memo'
    FROM jsonb_array_elements(p_lines) WITH ORDINALITY AS l(line, ord)
    JOIN payments.ledger_accounts a ON a.id = (l.line->>'account_id')::int;
    RETURN v_id;
END
$$;
COMMENT ON FUNCTION payments.post_entry(payments.entry_type, date, text, text, bigint, uuid, jsonb, bigint)
    IS 'Posts one journal entry with its lines; idempotent on p_idempotency_key. Balance is checked at commit.';

-- Convert an amount to USD cents at the rate valid at a point in time (finance reporting).
CREATE FUNCTION payments.to_usd_cents(p_amount_cents bigint, p_currency char(3), p_at timestamptz)
RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN p_currency = 'USD' THEN p_amount_cents
           ELSE round(p_amount_cents
                      * power(10, 2 - (SELECT c.minor_units FROM payments.currencies c WHERE c.code = p_currency))
                      / (SELECT r.rate FROM payments.fx_rates r
                         WHERE r.base = 'USD' AND r.quote = p_currency AND r.valid_during @> p_at))::bigint
           END
$$;

-- Views ------------------------------------------------------------------------------------

CREATE VIEW payments.merchant_balances AS
SELECT a.merchant_id, a.currency,
       sum(b.balance_cents) FILTER (WHERE a.purpose = 'merchant_payable') AS payable_cents,
       sum(b.balance_cents) FILTER (WHERE a.purpose = 'merchant_reserve') AS reserve_cents,
       max(b.updated_at) AS as_of
FROM payments.ledger_accounts a
JOIN payments.account_balances b ON b.account_id = a.id
WHERE a.merchant_id IS NOT NULL
GROUP BY a.merchant_id, a.currency;
COMMENT ON VIEW payments.merchant_balances IS 'What we owe each merchant (payable) and hold back (reserve), per currency.';

CREATE VIEW payments.trial_balance AS
SELECT a.currency, a.kind,
       sum(CASE WHEN a.normal_balance = 'D' THEN b.balance_cents ELSE 0 END) AS debit_cents,
       sum(CASE WHEN a.normal_balance = 'C' THEN b.balance_cents ELSE 0 END) AS credit_cents
FROM payments.ledger_accounts a
JOIN payments.account_balances b ON b.account_id = a.id
GROUP BY a.currency, a.kind;
COMMENT ON VIEW payments.trial_balance IS 'Debits and credits per currency and account kind; per currency the two totals are equal.';

CREATE VIEW payments.disputes_needing_response AS
SELECT d.id, d.intent_id, i.merchant_id, d.reason_code, d.category, d.amount_cents, d.currency,
       d.evidence_due_by, d.evidence_due_by - now() AS time_left
FROM payments.disputes d
JOIN payments.payment_intents i ON i.id = d.intent_id
WHERE d.status IN ('warning_needs_response', 'needs_response');
COMMENT ON VIEW payments.disputes_needing_response IS 'Open disputes still waiting for evidence; the merchant dashboard and a daily reminder read it.';

DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT p.oid::regprocedure AS fn FROM pg_proc p
             WHERE p.pronamespace = 'payments'::regnamespace
    LOOP
        EXECUTE format('ALTER FUNCTION %s OWNER TO ledger_owner', r.fn);
    END LOOP;
    FOR r IN SELECT c.relname FROM pg_class c
             WHERE c.relnamespace = 'payments'::regnamespace AND c.relkind = 'v'
    LOOP
        EXECUTE format('ALTER VIEW payments.%I OWNER TO ledger_owner', r.relname);
    END LOOP;
END
$$;
