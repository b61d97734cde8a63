-- Payments: unique constraints, secondary indexes, materialised views and sequence positions,
-- added after the data as a restore would.

ALTER TABLE payments.ledger_accounts ADD CONSTRAINT ledger_accounts_code_key UNIQUE (code);
CREATE UNIQUE INDEX ledger_accounts_merchant_purpose_key
    ON payments.ledger_accounts (merchant_id, purpose, currency) WHERE merchant_id IS NOT NULL;
CREATE INDEX ledger_accounts_parent_idx ON payments.ledger_accounts (parent_id);

ALTER TABLE payments.journal_entries
    ADD CONSTRAINT journal_entries_idempotency_key_key UNIQUE (idempotency_key);
CREATE INDEX journal_entries_source_idx ON payments.journal_entries (source_table, source_id);
-- append-only and posted in time order: a BRIN index serves the date-range scans of the
-- month-end close at a fraction of a btree's size
CREATE INDEX journal_entries_posted_at_brin ON payments.journal_entries USING brin (posted_at)
    WITH (pages_per_range = 32);
CREATE INDEX journal_lines_account_idx ON payments.journal_lines (account_id, entry_id);

ALTER TABLE payments.payment_intents ADD CONSTRAINT payment_intents_public_id_key UNIQUE (public_id);
CREATE INDEX payment_intents_merchant_created_idx ON payments.payment_intents (merchant_id, created_at DESC);
CREATE INDEX payment_intents_order_idx ON payments.payment_intents (order_id) WHERE order_id IS NOT NULL;
-- the sweeper looks for intents stuck in a non-final state
CREATE INDEX payment_intents_in_flight_idx ON payments.payment_intents (updated_at)
    WHERE status IN ('requires_confirmation', 'requires_action', 'processing', 'requires_capture');

ALTER TABLE payments.payment_attempts
    ADD CONSTRAINT payment_attempts_intent_attempt_key UNIQUE (intent_id, attempt_no);
CREATE UNIQUE INDEX payment_attempts_provider_ref_key
    ON payments.payment_attempts (provider_id, provider_ref) WHERE provider_ref IS NOT NULL;

CREATE INDEX payment_methods_merchant_idx ON payments.payment_methods (merchant_id);
CREATE INDEX payment_methods_fingerprint_idx ON payments.payment_methods (fingerprint);

CREATE INDEX refunds_intent_idx ON payments.refunds (intent_id);
CREATE UNIQUE INDEX refunds_provider_ref_key ON payments.refunds (provider_ref) WHERE provider_ref IS NOT NULL;
CREATE INDEX refunds_pending_idx ON payments.refunds (created_at) WHERE status = 'pending';

CREATE INDEX disputes_intent_idx ON payments.disputes (intent_id);
ALTER TABLE payments.disputes ADD CONSTRAINT disputes_provider_ref_key UNIQUE (provider_id, provider_ref);
CREATE INDEX disputes_evidence_due_idx ON payments.disputes (evidence_due_by)
    WHERE status IN ('warning_needs_response', 'needs_response');
CREATE INDEX dispute_evidence_dispute_idx ON payments.dispute_evidence (dispute_id);
ALTER TABLE payments.chargebacks ADD CONSTRAINT chargebacks_dispute_id_key UNIQUE (dispute_id);

CREATE INDEX fees_intent_idx ON payments.fees (intent_id);
CREATE INDEX fees_merchant_created_idx ON payments.fees (merchant_id, created_at);

CREATE UNIQUE INDEX merchant_bank_accounts_vault_token_key ON payments.merchant_bank_accounts (vault_token);
CREATE UNIQUE INDEX merchant_bank_accounts_one_default
    ON payments.merchant_bank_accounts (merchant_id) WHERE is_default AND disabled_at IS NULL;
CREATE INDEX merchant_bank_accounts_merchant_idx ON payments.merchant_bank_accounts (merchant_id);
CREATE INDEX merchant_fee_plans_schedule_idx ON payments.merchant_fee_plans (fee_schedule_id);
CREATE INDEX reserves_merchant_idx ON payments.reserves (merchant_id);

ALTER TABLE payments.payout_batches
    ADD CONSTRAINT payout_batches_rail_currency_date_key UNIQUE (rail, currency, batch_date);
CREATE INDEX payouts_merchant_arrival_idx ON payments.payouts (merchant_id, arrival_date DESC);
CREATE INDEX payouts_batch_idx ON payments.payouts (batch_id);
CREATE INDEX payouts_bank_account_idx ON payments.payouts (bank_account_id);
CREATE UNIQUE INDEX payouts_provider_ref_key ON payments.payouts (provider_ref) WHERE provider_ref IS NOT NULL;
CREATE INDEX payouts_open_idx ON payments.payouts (arrival_date) WHERE status IN ('pending', 'in_transit');

ALTER TABLE payments.provider_webhooks
    ADD CONSTRAINT provider_webhooks_provider_event_key UNIQUE (provider_id, event_id);
CREATE INDEX provider_webhooks_unprocessed_idx ON payments.provider_webhooks (received_at)
    WHERE processed_at IS NULL;
CREATE INDEX provider_webhooks_received_brin ON payments.provider_webhooks USING brin (received_at);

ALTER TABLE payments.reconciliation_runs
    ADD CONSTRAINT reconciliation_runs_provider_date_key UNIQUE (provider_id, statement_date);
ALTER TABLE payments.statement_lines ADD CONSTRAINT statement_lines_run_line_key UNIQUE (run_id, line_no);
CREATE INDEX statement_lines_attempt_idx ON payments.statement_lines (attempt_id);
CREATE INDEX statement_lines_provider_ref_idx ON payments.statement_lines (provider_ref);
CREATE INDEX reconciliation_exceptions_open_idx ON payments.reconciliation_exceptions (run_id)
    WHERE resolved_at IS NULL;
CREATE INDEX reconciliation_exceptions_line_idx ON payments.reconciliation_exceptions (statement_line_id);
CREATE INDEX idempotency_keys_created_idx ON payments.idempotency_keys (created_at);

-- FKs into small static tables (currencies, providers, fee schedules) are not indexed:
-- their rows are never deleted or re-keyed, so no cascade or check ever scans the children.
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT c.conname, c.conrelid::regclass AS tbl, c.confrelid::regclass AS parent
        FROM pg_constraint c
        WHERE c.contype = 'f' AND c.connamespace = 'payments'::regnamespace
          AND c.confrelid IN ('payments.currencies'::regclass, 'payments.providers'::regclass,
                              'payments.fee_schedules'::regclass)
          AND NOT EXISTS (SELECT 1 FROM pg_index i
                          WHERE i.indrelid = c.conrelid AND i.indkey[0] = c.conkey[1])
    LOOP
        EXECUTE format('COMMENT ON CONSTRAINT %I ON %s IS %L', r.conname, r.tbl,
            format('Not indexed on purpose: %s rows are never deleted or re-keyed.', r.parent));
    END LOOP;
END
$$;

-- Finance's monthly volume per merchant, refreshed nightly after the daily balances job.
CREATE MATERIALIZED VIEW payments.merchant_monthly_volume AS
SELECT i.merchant_id, date_trunc('month', i.created_at)::date AS month, i.currency,
    count(*) FILTER (WHERE i.status = 'succeeded') AS captured_count,
    coalesce(sum(i.amount_captured_cents), 0) AS captured_cents,
    coalesce(sum(i.amount_refunded_cents), 0) AS refunded_cents,
    count(*) FILTER (WHERE i.status IN ('requires_payment_method', 'canceled')) AS failed_count
FROM payments.payment_intents i
GROUP BY 1, 2, 3
WITH DATA;
CREATE UNIQUE INDEX merchant_monthly_volume_key ON payments.merchant_monthly_volume (merchant_id, month, currency);
COMMENT ON MATERIALIZED VIEW payments.merchant_monthly_volume IS 'Monthly captured and refunded volume per merchant; REFRESH ... CONCURRENTLY nightly (unique index).';
ALTER MATERIALIZED VIEW payments.merchant_monthly_volume OWNER TO ledger_owner;

