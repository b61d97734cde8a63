-- Extensions. All live in public (the historical default; every service's search_path ends
-- with public, so citext and the trigram operators resolve everywhere).
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION IF NOT EXISTS citext;       -- case-insensitive e-mails and handles
CREATE EXTENSION IF NOT EXISTS pgcrypto;     -- digest() for API key hashes, gen_random_uuid()
CREATE EXTENSION IF NOT EXISTS pg_trgm;      -- catalog search, fuzzy lookups in support tools
CREATE EXTENSION IF NOT EXISTS btree_gin;    -- composite GIN indexes (scalar + array/tsvector)
CREATE EXTENSION IF NOT EXISTS btree_gist;   -- exclusion constraints on validity ranges (FX rates)
-- DBA tool set
CREATE EXTENSION IF NOT EXISTS pg_buffercache;
CREATE EXTENSION IF NOT EXISTS pgstattuple;
CREATE EXTENSION IF NOT EXISTS amcheck;
