-- Every sequence continues after the ids its table was loaded with (tables that purge old
-- rows were loaded with ids that already start high). Never moves one backwards: a sequence
-- a file set ahead on purpose (catalog.sku_number_seq) keeps its value.
DO $$
DECLARE
    r record;
    mx bigint;
BEGIN
    FOR r IN SELECT c.oid::regclass AS tbl, a.attname AS col,
                    pg_get_serial_sequence(c.oid::regclass::text, a.attname) AS seq
               FROM pg_class c
               JOIN pg_namespace n ON n.oid = c.relnamespace
               JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
              WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
                AND n.nspname NOT LIKE 'pg\_%' AND n.nspname <> 'information_schema'
                AND pg_get_serial_sequence(c.oid::regclass::text, a.attname) IS NOT NULL
    LOOP
        EXECUTE format('SELECT max(%I) FROM %s', r.col, r.tbl) INTO mx;
        IF mx IS NOT NULL AND mx > coalesce(pg_sequence_last_value(r.seq::regclass), 0) THEN
            PERFORM setval(r.seq, mx);
        END IF;
    END LOOP;
END
$$;
