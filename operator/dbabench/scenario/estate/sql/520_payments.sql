-- Payments grants. ledger_owner owns everything; services get the least they need.
REVOKE ALL ON SCHEMA payments FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA payments FROM PUBLIC;
GRANT USAGE ON SCHEMA payments TO readonly, payments_api, ledger_writer, finance_reports,
    warehouse_loader, debezium, notifier, support_console;

-- readonly: everything except bank account tokens
GRANT SELECT ON ALL TABLES IN SCHEMA payments TO readonly;
REVOKE SELECT ON payments.merchant_bank_accounts FROM readonly;
GRANT SELECT (id, merchant_id, bank_name, country, currency, is_default, verified_at, created_at, disabled_at)
    ON payments.merchant_bank_accounts TO readonly;
GRANT SELECT ON payments.merchant_bank_accounts TO finance_reports;

-- payments_api: the payment lifecycle
GRANT SELECT ON ALL TABLES IN SCHEMA payments TO payments_api;
GRANT INSERT, UPDATE ON payments.payment_intents, payments.payment_attempts, payments.refunds,
    payments.disputes, payments.payment_methods, payments.provider_webhooks TO payments_api;
GRANT INSERT ON payments.dispute_evidence TO payments_api;
GRANT INSERT, UPDATE, DELETE ON payments.idempotency_keys TO payments_api;
GRANT DELETE ON payments.provider_webhooks TO payments_api;  -- nightly 30-day prune
GRANT UPDATE (payout_schedule, payout_delay_days, statement_descriptor, manual_capture)
    ON payments.merchant_settings TO payments_api;

-- ledger_writer: posts entries; the balance trigger runs with its rights
GRANT SELECT ON ALL TABLES IN SCHEMA payments TO ledger_writer;
GRANT INSERT ON payments.journal_entries, payments.journal_lines, payments.fees,
    payments.chargebacks, payments.daily_balances TO ledger_writer;
GRANT INSERT, UPDATE ON payments.account_balances, payments.payouts, payments.payout_batches,
    payments.reconciliation_runs, payments.statement_lines, payments.reconciliation_exceptions
    TO ledger_writer;
GRANT EXECUTE ON FUNCTION payments.post_entry(payments.entry_type, date, text, text, bigint, uuid, jsonb, bigint)
    TO ledger_writer;
GRANT EXECUTE ON FUNCTION payments.to_usd_cents(bigint, char, timestamptz) TO readonly, ledger_writer;

-- people
GRANT INSERT ON payments.refunds, payments.dispute_evidence TO support_console;
GRANT UPDATE (resolved_at, resolved_by, resolution_note) ON payments.reconciliation_exceptions TO finance_reports;
GRANT SELECT ON payments.merchant_settings TO notifier;

-- data platform: the loader reads everything (bank tokens excluded), CDC streams the ledger
GRANT SELECT ON ALL TABLES IN SCHEMA payments TO warehouse_loader;
REVOKE SELECT ON payments.merchant_bank_accounts FROM warehouse_loader;
GRANT SELECT ON payments.journal_entries, payments.journal_lines, payments.payment_intents,
    payments.refunds, payments.payouts, payments.disputes TO debezium;

GRANT USAGE ON ALL SEQUENCES IN SCHEMA payments TO payments_api, ledger_writer, support_console;

-- future tables created by migrations (flyway SET ROLE ledger_owner)
ALTER DEFAULT PRIVILEGES FOR ROLE ledger_owner IN SCHEMA payments GRANT SELECT ON TABLES TO readonly;
ALTER DEFAULT PRIVILEGES FOR ROLE ledger_owner IN SCHEMA payments GRANT SELECT ON TABLES TO warehouse_loader;
ALTER DEFAULT PRIVILEGES FOR ROLE ledger_owner IN SCHEMA payments REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;
