-- Identity data, deterministic and sized by :volume: shoppers (tenant 1) are most users,
-- then merchant staff (bigger merchants have bigger teams), then our own staff (tenant 2).
-- Triggers (change log, updated_at) are off while loading; the change log history is
-- generated here.
SET session_replication_role = replica;

INSERT INTO identity.tenants (id, slug, name, merchant_id, plan, region, status, settings, created_at, updated_at) VALUES
    (1, 'marketplace', 'Marketplace shoppers', NULL, 'internal', 'us-east', 'active',
     '{"signup": "open", "password_policy": "standard"}', now() - interval '1826 days', now() - interval '200 days'),
    (2, 'staff', 'Marketly staff', NULL, 'internal', 'us-east', 'active',
     '{"sso_only": true, "session_hours": 10}', now() - interval '1826 days', now() - interval '35 days'),
    (3, 'partners', 'Integration partners', NULL, 'internal', 'us-east', 'active',
     '{"app_review": true}', now() - interval '1400 days', now() - interval '400 days');

INSERT INTO identity.tenants (id, slug, name, merchant_id, plan, region, status, settings, created_at, updated_at)
SELECT 3 + m, 'merchant-' || m, 'Merchant ' || m, m,
    CASE WHEN m <= 5 THEN 'enterprise' WHEN m <= 20 THEN 'growth' WHEN m <= 85 THEN 'starter'
         ELSE 'free' END::identity.tenant_plan,
    CASE WHEN m IN (42, 77) OR m % 25 = 11 THEN 'ap-northeast'
         WHEN m % 10 IN (3, 5, 7) THEN 'eu-west' ELSE 'us-east' END,
    CASE WHEN m = 63 THEN 'suspended' ELSE 'active' END,
    jsonb_build_object('session_hours', CASE WHEN m <= 5 THEN 8 ELSE 12 END,
                       'require_mfa', m <= 20, 'webhook_version', '2024-06-01'),
    now() - make_interval(days => CASE WHEN m = 101 THEN 3 ELSE 1826 - m * 17 END),
    now() - make_interval(days => CASE WHEN m = 101 THEN 2 ELSE (hashint4(m) & 1023) % 300 END)
FROM generate_series(1, 101) m;

-- tenants of merchants that left the platform (their merchant rows were archived)
INSERT INTO identity.tenants (id, slug, name, merchant_id, plan, region, status, settings, created_at, updated_at)
SELECT 104 + k, 'closed-merchant-' || k, 'Closed merchant ' || k, NULL, 'starter', 'us-east', 'closed',
    '{}', now() - make_interval(days => 1700 - k * 60), now() - make_interval(days => 800 - k * 90)
FROM generate_series(1, 6) k;

-- the first user of each merchant tenant is its founder (owner), created with the tenant
CREATE TEMP TABLE seed_founders AS
SELECT DISTINCT ON (g) m, g FROM (
    SELECT m, greatest(1, floor(2000 * :volume * (1 - power(least(1.0,
              (CASE WHEN m = 101 THEN 3 ELSE 1826 - m * 17 END) / 1800.0), 2 / 3.0))))::int AS g
    FROM generate_series(1, 101) m
) f ORDER BY g, m;

CREATE TEMP TABLE seed_users AS
WITH base AS (
    SELECT g,
        155520000 * power(1 - g::float8 / (2000 * :volume), 1.5) AS age_s,
        (hashint8(g * 16 + 1) & 2147483647)::float8 / 2147483648 AS u1,
        (hashint8(g * 16 + 2) & 2147483647)::float8 / 2147483648 AS u2,
        (hashint8(g * 16 + 3) & 2147483647)::float8 / 2147483648 AS u3,
        (hashint8(g * 16 + 4) & 2147483647)::float8 / 2147483648 AS u4,
        (hashint8(g * 16 + 5) & 2147483647)::float8 / 2147483648 AS u5
    FROM generate_series(1, 2000 * :volume) g
), kinds AS (
    SELECT b.*, f.m AS founder_of,
        CASE WHEN f.m IS NOT NULL THEN 'merchant'
             WHEN b.u1 < 0.008 AND b.g < 20000 THEN 'staff'
             WHEN b.u1 < 0.10 THEN 'merchant'
             ELSE 'shopper' END AS kind,
        -- merchants onboarded by then, bigger (older) ones more likely
        coalesce(f.m, 1 + floor(least(100, greatest(1, floor((1826 - b.age_s / 86400) / 17)))
                                * power(b.u2, 1.8))::int) AS m
    FROM base b LEFT JOIN seed_founders f ON f.g = b.g
)
SELECT k.g AS id, k.kind, k.founder_of, k.age_s, k.u1, k.u2, k.u3, k.u4, k.u5,
    CASE k.kind WHEN 'shopper' THEN 1 WHEN 'staff' THEN 2
         ELSE CASE WHEN k.founder_of IS NULL AND k.u3 < 0.03 AND k.age_s > 86400 * 900 THEN 105 + k.g % 6
                   ELSE 3 + k.m END END AS tenant_id,
    (ARRAY['Olivia', 'Liam', 'Emma', 'Noah', 'Ava', 'Mateo', 'Sofia', 'Lucas', 'Mia', 'Elias',
           'Hana', 'Yuki', 'Chloe', 'Leon', 'Amara', 'Kwame', 'Priya', 'Arjun', 'Fatima', 'Omar',
           'Ingrid', 'Lars', 'Camille', 'Hugo', 'Giulia', 'Marco', 'Zoe', 'Ethan', 'Aisha', 'Diego',
           'Mei', 'Wei', 'Sara', 'Jonas', 'Nora', 'Felix', 'Lea', 'Tomas', 'Anna', 'Ravi'])[1 + (hashint8(k.g * 16 + 6) & 2147483647) % 40] AS first_name,
    (ARRAY['Smith', 'Johnson', 'Garcia', 'Mueller', 'Schmidt', 'Martin', 'Bernard', 'Rossi', 'Russo',
           'Tanaka', 'Suzuki', 'Sato', 'Kim', 'Lee', 'Nguyen', 'Patel', 'Singh', 'Okafor', 'Mensah',
           'Haddad', 'Novak', 'Kowalski', 'Andersson', 'Johansson', 'Nielsen', 'Silva', 'Santos',
           'Dubois', 'Moreau', 'Brown', 'Wilson', 'Taylor', 'Clarke', 'Walsh', 'Murphy', 'Kelly',
           'Cohen', 'Levi', 'Ivanova', 'Petrov'])[1 + (hashint8(k.g * 16 + 7) & 2147483647) % 40] AS last_name,
    now() - make_interval(secs => k.age_s) AS created_at,
    CASE WHEN k.founder_of IS NOT NULL OR k.kind = 'staff' THEN 'active'
         WHEN k.u3 < 0.045 THEN 'deactivated'
         WHEN k.u3 < 0.05 THEN 'suspended'
         WHEN k.kind = 'merchant' AND k.u3 < 0.08 AND k.age_s < 86400 * 14 THEN 'invited'
         ELSE 'active' END::identity.user_status AS status,
    -- time since last login: recent for most active users
    least(k.age_s, 31536000 * power(k.u4, 3)) AS login_age_s
FROM kinds k;

INSERT INTO identity.users (id, public_id, email, display_name, password_hash, status, locale,
    time_zone, mfa_enabled, email_verified_at, created_at, updated_at, last_login_at, deleted_at)
SELECT u.id, md5('user' || u.id)::uuid,
    CASE WHEN u.status = 'deactivated' AND u.u3 < 0.015 THEN 'erased-' || u.id || '@erased.invalid'
         ELSE lower(u.first_name || '.' || u.last_name) || u.id || '@' ||
              CASE u.kind WHEN 'staff' THEN 'marketly.com'
                          WHEN 'merchant' THEN 'merchant-' || (u.tenant_id - 3) || '.com'
                          ELSE (ARRAY['gmail.com', 'gmail.com', 'gmail.com', 'gmail.com', 'yahoo.com',
                                      'outlook.com', 'hotmail.com', 'icloud.com', 'icloud.com', 'proton.me',
                                      'gmx.de', 'web.de', 'orange.fr', 'yahoo.co.jp', 'btinternet.com'])[1 + floor(u.u5 * 15)::int] END
    END,
    CASE WHEN u.status = 'deactivated' AND u.u3 < 0.015 THEN 'Erased user' ELSE u.first_name || ' ' || u.last_name END,
    CASE WHEN u.kind = 'staff' OR (u.kind = 'merchant' AND u.tenant_id BETWEEN 4 AND 8) THEN NULL
         WHEN u.kind = 'shopper' AND u.u5 < 0.3 THEN NULL
         WHEN u.login_age_s > 86400 * 1095 THEN
              '$2b$12$' || substr(replace(encode(sha256(convert_to('bc' || u.id, 'UTF8')), 'base64'), '/', '.'), 1, 53)
         ELSE '$argon2id$v=19$m=65536,t=3,p=4$'
              || rtrim(encode(substr(sha256(convert_to('salt' || u.id, 'UTF8')), 1, 16), 'base64'), '=') || '$'
              || rtrim(encode(sha256(convert_to('pw' || u.id, 'UTF8')), 'base64'), '=') END,
    u.status,
    CASE WHEN u.kind = 'shopper' THEN
              CASE floor(u.u5 * 15)::int WHEN 10 THEN 'de-DE' WHEN 11 THEN 'de-DE' WHEN 12 THEN 'fr-FR'
                   WHEN 13 THEN 'ja-JP' WHEN 14 THEN 'en-GB' ELSE 'en-US' END
         WHEN u.tenant_id - 3 IN (42, 77) THEN 'ja-JP'
         WHEN (u.tenant_id - 3) % 10 = 5 THEN 'en-GB'
         WHEN (u.tenant_id - 3) % 10 IN (3, 7) THEN (ARRAY['de-DE', 'fr-FR', 'nl-NL', 'en-IE'])[1 + (u.tenant_id - 3) % 4]
         ELSE 'en-US' END,
    CASE WHEN u.kind = 'shopper' AND floor(u.u5 * 15)::int = 13 THEN 'Asia/Tokyo'
         WHEN u.kind = 'shopper' AND floor(u.u5 * 15)::int BETWEEN 10 AND 12 THEN 'Europe/Berlin'
         ELSE (ARRAY['America/New_York', 'America/Chicago', 'America/Los_Angeles', 'Europe/London', 'UTC'])[1 + u.id % 5] END,
    u.kind = 'staff' OR (u.kind = 'merchant' AND (u.u4 < 0.45 OR u.tenant_id <= 23)) OR u.u4 < 0.03,
    CASE WHEN u.status = 'invited' OR u.u5 > 0.96 THEN NULL ELSE u.created_at + make_interval(secs => 30 + (u.id % 900)) END,
    u.created_at,
    u.created_at + make_interval(secs => (u.age_s * u.u5 * 0.5)),
    CASE WHEN u.status <> 'invited' THEN now() - make_interval(secs => u.login_age_s) END,
    CASE WHEN u.status = 'deactivated' AND u.u3 < 0.015 THEN now() - make_interval(secs => u.login_age_s * 0.5) END
FROM seed_users u;

-- Memberships: everyone in their primary tenant; 3% of merchant staff (agencies) also
-- work for a second merchant.
INSERT INTO identity.memberships (tenant_id, user_id, role, invited_by, created_at)
SELECT x.tenant_id, x.user_id, x.role, x.invited_by, x.created_at
FROM (
    SELECT u.tenant_id, u.id AS user_id,
        CASE WHEN u.kind = 'shopper' THEN 'shopper'
             WHEN u.founder_of IS NOT NULL THEN 'owner'
             WHEN u.kind = 'staff' THEN (ARRAY['admin', 'support', 'support', 'support', 'developer',
                                               'developer', 'finance', 'viewer', 'viewer', 'support'])[1 + u.id % 10]
             WHEN u.u5 < 0.01 THEN 'owner'
             WHEN u.u5 < 0.09 THEN 'admin'
             WHEN u.u5 < 0.31 THEN 'developer'
             WHEN u.u5 < 0.43 THEN 'finance'
             WHEN u.u5 < 0.73 THEN 'support'
             ELSE 'viewer' END::identity.membership_role AS role,
        CASE WHEN u.kind = 'merchant' AND u.founder_of IS NULL THEN f.g
             WHEN u.kind = 'staff' AND u.id > 1 THEN (SELECT min(s.id) FROM seed_users s WHERE s.kind = 'staff') END AS invited_by,
        u.created_at
    FROM seed_users u
    LEFT JOIN seed_founders f ON f.m = u.tenant_id - 3 AND f.g < u.id
    UNION ALL
    SELECT 4 + (u.tenant_id - 3 + u.id % 37) % 100, u.id, 'developer', f.g, u.created_at + interval '30 days'
    FROM seed_users u
    JOIN seed_founders f ON f.m = 1 + (u.tenant_id - 3 + u.id % 37) % 100 AND f.g < u.id
    WHERE u.kind = 'merchant' AND u.founder_of IS NULL AND u.tenant_id BETWEEN 4 AND 104 AND u.u1 > 0.097
      AND u.created_at + interval '30 days' < now()
) x
WHERE x.invited_by IS DISTINCT FROM x.user_id
ORDER BY x.created_at, x.user_id;

-- Invitations: one per invited member (accepted, or still pending for invited users), plus
-- a tail of invitations that expired or were revoked.
INSERT INTO identity.invitations (tenant_id, email, role, token_hash, invited_by, created_at,
    expires_at, accepted_at, revoked_at)
SELECT m.tenant_id, u.email, m.role, sha256(convert_to('inv' || m.tenant_id || '-' || m.user_id, 'UTF8')),
    m.invited_by, m.created_at - interval '1 day', m.created_at + interval '6 days',
    CASE WHEN u.status <> 'invited' THEN m.created_at END, NULL
FROM identity.memberships m JOIN identity.users u ON u.id = m.user_id
WHERE m.invited_by IS NOT NULL AND m.role NOT IN ('owner', 'shopper')
UNION ALL
SELECT m.tenant_id, 'candidate' || m.user_id || '@' || split_part(u.email::text, '@', 2), 'viewer',
    sha256(convert_to('inv-x' || m.user_id, 'UTF8')), m.user_id,
    m.created_at + interval '20 days', m.created_at + interval '27 days', NULL,
    CASE WHEN m.user_id % 3 = 0 THEN m.created_at + interval '22 days' END
FROM identity.memberships m JOIN identity.users u ON u.id = m.user_id
WHERE m.role IN ('owner', 'admin') AND m.user_id % 4 = 1 AND m.created_at < now() - interval '27 days'
ORDER BY 6, 1, 2;

-- Linked external identities: social login for shoppers, Google Workspace for staff, SAML for
-- the enterprise tenants (merchants 1-5, tenants 4-8).
INSERT INTO identity.user_identities (user_id, provider, subject, tenant_id, linked_at, last_used_at)
SELECT u.id,
    CASE WHEN s.kind = 'staff' THEN 'google'
         WHEN s.kind = 'merchant' AND s.tenant_id BETWEEN 4 AND 8 THEN 'saml'
         WHEN s.u2 < 0.55 THEN 'google' WHEN s.u2 < 0.9 THEN 'apple' ELSE 'microsoft' END,
    CASE WHEN s.kind = 'merchant' AND s.tenant_id BETWEEN 4 AND 8 THEN u.email::text
         WHEN s.kind = 'staff' OR s.u2 < 0.55 THEN (100000000000000000000::numeric + (hashint8(u.id) & 2147483647)::bigint * 1000 + u.id % 1000)::text
         WHEN s.u2 < 0.9 THEN '00' || lpad((u.id % 10000)::text, 4, '0') || '.' || md5('apple' || u.id) || '.' || lpad((u.id % 10000)::text, 4, '0')
         ELSE md5('ms' || u.id)::uuid::text END,
    CASE WHEN s.kind = 'merchant' AND s.tenant_id BETWEEN 4 AND 8 THEN s.tenant_id END,
    u.created_at, u.last_login_at
FROM identity.users u JOIN seed_users s ON s.id = u.id
WHERE u.password_hash IS NULL OR (s.kind = 'shopper' AND s.u2 > 0.93)
ORDER BY u.id;

-- Second factors.
INSERT INTO identity.mfa_factors (user_id, kind, label, secret_encrypted, credential_id, phone_e164,
    created_at, last_used_at, disabled_at)
SELECT u.id, f.kind,
    CASE f.kind WHEN 'totp' THEN 'Authenticator app' WHEN 'webauthn' THEN (ARRAY['YubiKey 5C', 'MacBook Touch ID', 'iPhone passkey', 'Pixel passkey'])[1 + u.id % 4]
                ELSE 'SMS ending ' || lpad((u.id % 10000)::text, 4, '0') END,
    CASE WHEN f.kind = 'totp' THEN decode('01' || md5('totp' || u.id) || md5('totp2' || u.id), 'hex') END,
    CASE WHEN f.kind = 'webauthn' THEN decode(md5('cred' || u.id) || md5('cred2' || u.id), 'hex') END,
    CASE WHEN f.kind = 'sms' THEN '+1' || (2000000000 + (hashint8(u.id) & 2147483647) % 7999999999)::text END,
    u.created_at + interval '1 hour' + make_interval(days => f.n * 30),
    u.last_login_at,
    NULL::timestamptz
FROM identity.users u JOIN seed_users s ON s.id = u.id
CROSS JOIN LATERAL (
    SELECT 1 AS n, CASE WHEN s.kind = 'staff' THEN 'webauthn' WHEN s.u4 < 0.70 THEN 'totp'
                        WHEN s.u4 < 0.93 THEN 'webauthn' ELSE 'sms' END::identity.mfa_kind AS kind
    UNION ALL
    SELECT 2, 'totp' WHERE s.kind = 'staff' OR s.u5 < 0.15
) f
WHERE u.mfa_enabled
  AND NOT (f.n = 2 AND s.kind <> 'staff' AND s.u4 < 0.70)   -- no second TOTP
ORDER BY u.id, f.n;

-- Password resets and e-mail confirmations of the last 30 days (older ones are pruned).
INSERT INTO identity.password_resets (token_hash, user_id, requested_ip, created_at, expires_at, used_at)
SELECT sha256(convert_to('pwreset' || u.id, 'UTF8')), u.id,
    ((ARRAY[24, 37, 45, 62, 73, 81, 92, 98])[1 + u.id % 8] || '.' || (u.id % 250) || '.' || (u.id * 7 % 250) || '.' || (1 + u.id % 253))::inet,
    now() - make_interval(secs => s.login_age_s + 600),
    now() - make_interval(secs => s.login_age_s + 600) + interval '1 hour',
    CASE WHEN s.u5 < 0.8 THEN now() - make_interval(secs => s.login_age_s + 300) END
FROM identity.users u JOIN seed_users s ON s.id = u.id
WHERE u.password_hash IS NOT NULL AND u.status = 'active' AND s.login_age_s < 30 * 86400 - 3600 AND s.u3 > 0.985
ORDER BY 4, 2;

INSERT INTO identity.email_verifications (token_hash, user_id, email, created_at, expires_at, verified_at)
SELECT sha256(convert_to('verify' || u.id, 'UTF8')), u.id, u.email, u.created_at, u.created_at + interval '48 hours',
    u.email_verified_at
FROM identity.users u
WHERE u.created_at > now() - interval '30 days' AND u.deleted_at IS NULL
ORDER BY u.created_at, u.id;

-- Sessions from logins in the last 30 days (expired ones are kept 30 days, then pruned);
-- a quarter of the users have a second device.
INSERT INTO identity.sessions (id, user_id, tenant_id, created_at, last_seen_at, expires_at, ip,
    user_agent, mfa_verified, revoked_at, revoked_reason)
SELECT md5('sess' || x.user_id || '-' || x.n)::uuid, x.user_id,
    CASE WHEN x.tenant_id > 1 THEN x.tenant_id END,
    x.created_at,
    least(now(), x.created_at + make_interval(secs => x.life_s * x.seen)),
    x.created_at + make_interval(secs => x.life_s),
    x.ip, x.user_agent, x.mfa,
    CASE WHEN x.revoke THEN least(now(), x.created_at + make_interval(secs => x.life_s * x.seen)) END,
    CASE WHEN x.revoke THEN CASE WHEN x.user_id % 50 = 0 THEN 'password_changed' ELSE 'logout' END END
FROM (
    SELECT u.id AS user_id, d.n, s.tenant_id,
        now() - make_interval(secs => s.login_age_s + (d.n - 1) * 86400 * 3 * s.u5) AS created_at,
        CASE WHEN s.kind = 'shopper' THEN 30 * 86400 WHEN s.kind = 'staff' THEN 10 * 3600 ELSE 12 * 3600 END AS life_s,
        power(s.u2, 0.5) AS seen,
        CASE WHEN s.kind = 'staff' THEN ('198.51.100.' || (10 + u.id % 40))::inet
             ELSE ((ARRAY[24, 37, 45, 62, 73, 81, 92, 98, 104, 142, 151, 174, 185, 203])[1 + (hashint8(u.id * 3 + d.n) & 2147483647) % 14]
                   || '.' || (hashint8(u.id * 5 + d.n) & 255) || '.' || (hashint8(u.id * 7 + d.n) & 255)
                   || '.' || (1 + (hashint8(u.id * 11 + d.n) & 2147483647) % 254))::inet END AS ip,
        (ARRAY['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
               'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
               'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
               'Marketly/7.31 (iPhone; iOS 17.4; Scale/3.00)',
               'Marketly/7.30 (Android 14; Pixel 8)',
               'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'])[1 + (hashint8(u.id * 13 + d.n) & 2147483647) % 6] AS user_agent,
        u.mfa_enabled AS mfa,
        (hashint8(u.id * 17 + d.n) & 2147483647) % 100 < 15 AS revoke
    FROM identity.users u JOIN seed_users s ON s.id = u.id
    CROSS JOIN LATERAL generate_series(1, CASE WHEN s.u1 > 0.75 THEN 2 ELSE 1 END) d(n)
    WHERE u.status = 'active' AND s.login_age_s + 86400 * 3 < 30 * 86400
) x
ORDER BY x.created_at, x.user_id, x.n;

-- API keys: every merchant tenant has live and test keys, big merchants many more; older
-- keys were rotated (revoked).
INSERT INTO identity.api_keys (tenant_id, name, prefix, key_hash, scopes, environment, created_by,
    created_at, last_used_at, expires_at, revoked_at)
SELECT k.tenant_id, k.name, k.prefix, sha256(convert_to('secret:' || k.prefix, 'UTF8')), k.scopes,
    k.env, f.g, k.created_at,
    CASE WHEN k.revoked_at IS NOT NULL THEN k.revoked_at - interval '2 days'
         WHEN k.env = 'live' THEN now() - make_interval(secs => 1 + (hashint4(k.n * 7 + k.tenant_id) & 65535))
         ELSE now() - make_interval(days => (hashint4(k.n + k.tenant_id) & 255)) END,
    k.expires_at, k.revoked_at
FROM (
    SELECT 3 + m AS tenant_id, m, n,
        CASE WHEN n = 0 THEN 'test' ELSE 'live' END AS env,
        CASE WHEN n % 5 = 4 THEN 'rk_' ELSE 'sk_' END || CASE WHEN n = 0 THEN 'test_' ELSE 'live_' END
            || substr(md5('key' || m || '-' || n), 1, 8) AS prefix,
        CASE WHEN n = 0 THEN 'Test mode' WHEN n = 1 THEN 'Production'
             WHEN n % 5 = 4 THEN (ARRAY['Warehouse sync (read-only)', 'BI export', 'Catalog feed'])[1 + n % 3]
             ELSE (ARRAY['Checkout backend', 'Refund tool', 'ERP connector', 'Mobile backend', 'Order router'])[1 + n % 5] || ' ' || n END AS name,
        CASE WHEN n % 5 = 4 THEN '{catalog:read,orders:read,reports:read}'::text[]
             ELSE '{payments:read,payments:write,refunds:write,payouts:read,orders:read,orders:write}'::text[] END AS scopes,
        now() - make_interval(days => CASE WHEN m = 101 THEN 1 ELSE greatest(1, 1826 - m * 17 - n * 90) END) AS created_at,
        CASE WHEN n % 7 = 6 THEN now() + interval '90 days' END AS expires_at,
        CASE WHEN n >= 2 AND (hashint4(m * 100 + n) & 3) = 0 AND m <> 101
             THEN now() - make_interval(days => greatest(1, 1826 - m * 17 - n * 90) / 2) END AS revoked_at
    FROM generate_series(1, 101) m
    CROSS JOIN LATERAL generate_series(0, 1 + floor(14 * power((101 - m) / 100.0, 4))::int) n
) k
JOIN seed_founders f ON f.m = k.m
ORDER BY k.created_at, k.tenant_id, k.prefix;

INSERT INTO identity.api_key_usage_daily (api_key_id, day, requests, errors, p95_ms)
SELECT k.id, d::date, r.requests, (r.requests * (0.002 + 0.02 * ((hashint4(k.id * 1000 + d::date - date '2000-01-01') & 1023) / 1023.0)^4))::bigint,
    90 + (hashint4(k.id + (d::date - date '2000-01-01')) & 127)
FROM identity.api_keys k
CROSS JOIN generate_series(current_date - 90, current_date - 1, interval '1 day') d
CROSS JOIN LATERAL (SELECT round(400000.0 / power(k.tenant_id - 3, 1.3) / (1 + k.id % 3)
                                 * CASE WHEN extract(isodow FROM d) >= 6 THEN 0.7 ELSE 1 END
                                 * (0.85 + 0.3 * ((hashint4(k.id * 7 + (d::date - date '2000-01-01')) & 1023) / 1023.0)))::bigint AS requests) r
WHERE k.environment = 'live' AND k.revoked_at IS NULL AND k.created_at < d
  AND r.requests > 0;

-- OAuth: our own apps, partner apps, a few merchants' private apps.
INSERT INTO identity.oauth_clients (id, tenant_id, client_id, client_secret_hash, name, redirect_uris,
    grant_types, scopes, is_first_party, created_at, disabled_at) VALUES
    (1, NULL, 'dashboard-web', NULL, 'Merchant dashboard', '{https://dashboard.marketly.com/auth/callback}',
     '{authorization_code,refresh_token}', '{payments:read,payments:write,refunds:write,payouts:read,catalog:read,catalog:write,orders:read,orders:write,fulfilment:write,webhooks:manage,reports:read}', true, now() - interval '1826 days', NULL),
    (2, NULL, 'shop-ios', NULL, 'Marketly for iOS', '{marketly://oauth}', '{authorization_code,refresh_token}', '{orders:read,orders:write}', true, now() - interval '1600 days', NULL),
    (3, NULL, 'shop-android', NULL, 'Marketly for Android', '{marketly://oauth}', '{authorization_code,refresh_token}', '{orders:read,orders:write}', true, now() - interval '1550 days', NULL),
    (4, NULL, 'marketly-cli', NULL, 'Marketly CLI', '{}', '{urn:ietf:params:oauth:grant-type:device_code,refresh_token}', '{payments:read,catalog:read,catalog:write,webhooks:manage}', true, now() - interval '700 days', NULL),
    (5, NULL, 'support-console', NULL, 'Support console', '{https://support.internal.marketly.com/callback}', '{authorization_code}', '{payments:read,refunds:write,orders:read,orders:write}', true, now() - interval '1400 days', NULL),
    (6, NULL, 'dashboard-web-legacy', NULL, 'Merchant dashboard (2021)', '{https://app.marketly.com/callback}', '{authorization_code}', '{payments:read,orders:read}', true, now() - interval '1826 days', now() - interval '900 days');

INSERT INTO identity.oauth_clients (id, tenant_id, client_id, client_secret_hash, name, redirect_uris,
    grant_types, scopes, is_first_party, created_at, disabled_at)
SELECT 6 + n, 3, 'app_' || substr(md5('partner' || n), 1, 16), sha256(convert_to('cs' || n, 'UTF8')), a.name,
    ARRAY['https://' || a.host || '/oauth/marketly/callback'], '{authorization_code,refresh_token}', a.scopes, false,
    now() - make_interval(days => 1300 - n * 80), CASE WHEN n = 7 THEN now() - interval '200 days' END
FROM (VALUES
    (1, 'Ledgerline accounting sync', 'app.ledgerline.io', '{payments:read,payouts:read,reports:read}'::text[]),
    (2, 'Helpdeskly', 'helpdeskly.com', '{orders:read,refunds:write}'::text[]),
    (3, 'ShipFast labels', 'shipfast.app', '{orders:read,fulfilment:write}'::text[]),
    (4, 'Mailbird campaigns', 'mailbird.co', '{orders:read,catalog:read}'::text[]),
    (5, 'StockPilot inventory', 'stockpilot.io', '{catalog:read,catalog:write}'::text[]),
    (6, 'TaxTally', 'taxtally.com', '{payments:read,reports:read}'::text[]),
    (7, 'Feedr (discontinued)', 'feedr.io', '{catalog:read}'::text[]),
    (8, 'Reviewr', 'reviewr.app', '{orders:read}'::text[]),
    (9, 'ERPBridge', 'erpbridge.com', '{orders:read,orders:write,catalog:read,catalog:write,payouts:read}'::text[]),
    (10, 'Chargeback Shield', 'cbshield.com', '{payments:read,refunds:write}'::text[])
) a(n, name, host, scopes);

INSERT INTO identity.oauth_clients (id, tenant_id, client_id, client_secret_hash, name, redirect_uris,
    grant_types, scopes, is_first_party, created_at)
SELECT 16 + m, 3 + m, 'app_' || substr(md5('private' || m), 1, 16), sha256(convert_to('pcs' || m, 'UTF8')),
    'Merchant ' || m || ' internal tools', ARRAY['https://tools.merchant-' || m || '.com/callback'],
    '{client_credentials}', '{payments:read,orders:read,reports:read}', false,
    now() - make_interval(days => 1500 - m * 60)
FROM generate_series(1, 12) m;

INSERT INTO identity.oauth_grants (client_id, user_id, tenant_id, scopes, granted_at, last_token_at, revoked_at)
SELECT c.id, f.g, t.id, c.scopes,
    greatest(t.created_at, c.created_at) + make_interval(days => (hashint4(c.id * 1000 + t.id) & 127)),
    CASE WHEN c.disabled_at IS NULL THEN now() - make_interval(mins => (hashint4(t.id * 31 + c.id) & 4095)) ELSE c.disabled_at END,
    CASE WHEN c.disabled_at IS NOT NULL THEN c.disabled_at
         WHEN (hashint4(c.id * 77 + t.id) & 15) = 0 THEN now() - make_interval(days => (hashint4(c.id + t.id) & 63)) END
FROM identity.tenants t
JOIN seed_founders f ON f.m = t.merchant_id
JOIN identity.oauth_clients c ON (c.tenant_id = 3 AND (hashint4(c.id * 131 + t.id) & 1023) < 1023 * (0.45 - t.merchant_id * 0.003))
                              OR (c.tenant_id = t.id AND c.grant_types = '{client_credentials}')
WHERE t.merchant_id IS NOT NULL AND t.merchant_id <> 101
  AND greatest(t.created_at, c.created_at) + make_interval(days => (hashint4(c.id * 1000 + t.id) & 127)) < now()
ORDER BY 5, 1, 3;

INSERT INTO identity.permissions (code, category, description) VALUES
    ('payments:read', 'payments', 'View payments and their attempts'),
    ('payments:write', 'payments', 'Create and capture payments'),
    ('refunds:write', 'payments', 'Issue refunds'),
    ('disputes:manage', 'payments', 'Respond to disputes and upload evidence'),
    ('payouts:read', 'payments', 'View payouts and balances'),
    ('payouts:manage', 'payments', 'Change payout schedule and bank accounts'),
    ('catalog:read', 'catalog', 'View products and prices'),
    ('catalog:write', 'catalog', 'Edit products and prices'),
    ('orders:read', 'orders', 'View orders'),
    ('orders:write', 'orders', 'Edit and cancel orders'),
    ('fulfilment:write', 'fulfilment', 'Create shipments and returns'),
    ('team:read', 'team', 'View team members'),
    ('team:manage', 'team', 'Invite and remove members, change roles'),
    ('api_keys:manage', 'developers', 'Create and revoke API keys'),
    ('webhooks:manage', 'developers', 'Configure webhook endpoints'),
    ('sso:manage', 'security', 'Configure SAML and enforced domains'),
    ('reports:read', 'reports', 'Download financial reports'),
    ('account:close', 'account', 'Close the merchant account'),
    ('shop:purchase', 'shopping', 'Buy on the marketplace'),
    ('shop:review', 'shopping', 'Write product reviews');

INSERT INTO identity.role_permissions (role, permission_code)
SELECT r.role::identity.membership_role, p.code
FROM identity.permissions p
CROSS JOIN (VALUES ('owner'), ('admin'), ('developer'), ('finance'), ('support'), ('viewer'), ('shopper')) r(role)
WHERE CASE r.role
    WHEN 'owner' THEN p.category <> 'shopping'
    WHEN 'admin' THEN p.category <> 'shopping' AND p.code <> 'account:close'
    WHEN 'developer' THEN p.code IN ('payments:read', 'payments:write', 'catalog:read', 'catalog:write', 'orders:read',
                                     'orders:write', 'fulfilment:write', 'team:read', 'api_keys:manage', 'webhooks:manage')
    WHEN 'finance' THEN p.code IN ('payments:read', 'refunds:write', 'disputes:manage', 'payouts:read', 'payouts:manage',
                                   'orders:read', 'team:read', 'reports:read')
    WHEN 'support' THEN p.code IN ('payments:read', 'refunds:write', 'disputes:manage', 'orders:read', 'orders:write',
                                   'fulfilment:write', 'team:read', 'catalog:read')
    WHEN 'viewer' THEN p.code LIKE '%:read'
    ELSE p.category = 'shopping' END;

INSERT INTO identity.tenant_domains (tenant_id, domain, verification_token, verified_at, sso_enforced, created_at)
SELECT t.id, CASE WHEN t.id = 2 THEN 'marketly.com' ELSE 'merchant-' || t.merchant_id || '.com' END,
    'marketly-verify=' || substr(md5('dv' || t.id), 1, 32),
    CASE WHEN t.id = 2 OR t.merchant_id <= 20 THEN t.created_at + interval '3 days' END,
    t.id = 2 OR t.merchant_id <= 5,
    t.created_at + interval '2 days'
FROM identity.tenants t
WHERE t.id = 2 OR t.merchant_id <= 25
ORDER BY t.id;

INSERT INTO identity.saml_connections (tenant_id, idp_entity_id, sso_url, x509_cert_sha256, cert_expires_at,
    attribute_mapping, default_role, enabled, created_at, updated_at)
SELECT t.id,
    CASE WHEN t.id % 2 = 0 THEN 'http://www.okta.com/exk' || substr(md5('okta' || t.id), 1, 17)
         ELSE 'https://sts.windows.net/' || md5('entra' || t.id)::uuid || '/' END,
    CASE WHEN t.id % 2 = 0 THEN 'https://' || t.slug || '.okta.com/app/marketly/exk' || substr(md5('okta' || t.id), 1, 17) || '/sso/saml'
         ELSE 'https://login.microsoftonline.com/' || md5('entra' || t.id)::uuid || '/saml2' END,
    upper(encode(sha256(convert_to('cert' || t.id, 'UTF8')), 'hex')),
    -- tenant 6's certificate expires in three weeks: the reminder has gone out
    CASE WHEN t.id = 6 THEN now() + interval '21 days' ELSE now() + make_interval(days => 200 + t.id * 40) END,
    CASE WHEN t.id = 2 THEN '{"email": "NameID", "groups": "memberOf", "role_map": {"eng-oncall": "admin", "support": "support"}}'::jsonb
         ELSE '{"email": "NameID", "first_name": "givenName", "last_name": "surname"}'::jsonb END,
    CASE WHEN t.id = 2 THEN 'viewer' ELSE 'support' END::identity.membership_role,
    true, t.created_at + interval '30 days', now() - make_interval(days => t.id * 11)
FROM identity.tenants t
WHERE t.id = 2 OR t.merchant_id <= 5
ORDER BY t.id;

INSERT INTO identity.ip_allowlists (tenant_id, cidr, label, created_by, created_at)
SELECT t.id, c.cidr::cidr, c.label, f.g, t.created_at + make_interval(days => 60 + c.n * 45)
FROM identity.tenants t
JOIN seed_founders f ON f.m = t.merchant_id
CROSS JOIN LATERAL (
    SELECT n, CASE n WHEN 1 THEN '34.' || (t.id * 7 % 200) || '.' || (t.id * 13 % 250) || '.0/24'
                     WHEN 2 THEN '52.' || (t.id * 11 % 200) || '.' || (t.id * 3 % 250) || '.16/28'
                     WHEN 3 THEN '35.' || (t.id * 5 % 200) || '.0.0/16'
                     ELSE '3.' || (t.id * 17 % 200) || '.' || (t.id % 250) || '.7/32' END AS cidr,
        (ARRAY['Production NAT', 'DR region NAT', 'Office VPN', 'Batch workers'])[n] AS label
    FROM generate_series(1, 1 + t.merchant_id % 4) n
) c
WHERE t.merchant_id <= 8
ORDER BY 5, 1, 2;

-- Change log history: memberships granted, API keys created and revoked, users deactivated.
INSERT INTO identity.change_log (changed_at, actor, tenant_id, table_name, row_key, action, changed_fields)
SELECT x.changed_at, x.actor, x.tenant_id, x.table_name, x.row_key, x.action, x.changed_fields
FROM (
    SELECT m.created_at AS changed_at, coalesce('user:' || m.invited_by, 'identity_api') AS actor, m.tenant_id,
        'memberships' AS table_name, m.tenant_id || '/' || m.user_id AS row_key, 'I' AS action,
        jsonb_build_object('tenant_id', m.tenant_id, 'user_id', m.user_id, 'role', m.role, 'invited_by', m.invited_by) AS changed_fields
    FROM identity.memberships m WHERE m.role <> 'shopper'
    UNION ALL
    SELECT k.created_at, 'user:' || k.created_by, k.tenant_id, 'api_keys', k.id::text, 'I',
        jsonb_build_object('name', k.name, 'prefix', k.prefix, 'scopes', k.scopes, 'environment', k.environment)
    FROM identity.api_keys k
    UNION ALL
    SELECT k.revoked_at, 'user:' || k.created_by, k.tenant_id, 'api_keys', k.id::text, 'U',
        jsonb_build_object('revoked_at', jsonb_build_array(NULL, k.revoked_at))
    FROM identity.api_keys k WHERE k.revoked_at IS NOT NULL
    UNION ALL
    SELECT coalesce(u.deleted_at, u.updated_at), CASE WHEN u.deleted_at IS NOT NULL THEN 'privacy_request' ELSE 'support_console' END,
        NULL, 'users', u.id::text, 'U',
        jsonb_build_object('status', jsonb_build_array('active', u.status::text))
    FROM identity.users u WHERE u.status IN ('deactivated', 'suspended')
) x
ORDER BY x.changed_at, x.table_name, x.row_key, x.action;

-- Login attempts of the last twelve months, including a credential-stuffing burst three weeks
-- ago (unknown users and bad passwords from a handful of addresses, then rate limited).
CREATE TEMP TABLE seed_logins AS
SELECT g,
    (hashint8(g * 8 + 1) & 2147483647)::float8 / 2147483648 AS u1,
    (hashint8(g * 8 + 2) & 2147483647)::float8 / 2147483648 AS u2,
    (hashint8(g * 8 + 3) & 2147483647)::float8 / 2147483648 AS u3,
    CASE WHEN (hashint8(g * 8 + 4) & 2147483647) % 100 < 4 THEN true ELSE false END AS burst,
    31536000 * power(1 - g::float8 / (3000 * :volume), 1.3) AS age_s
FROM generate_series(1, 3000 * :volume) g;

INSERT INTO identity.login_audit (id, occurred_at, tenant_id, user_id, email_attempted, outcome, method,
    ip, user_agent, country, failure_detail)
SELECT 21000 * :volume + row_number() OVER (ORDER BY x.occurred_at, x.g), x.occurred_at, x.tenant_id, x.user_id,
    x.email, x.outcome, x.method, x.ip, x.user_agent, x.country, x.detail
FROM (
    -- ordinary sign-ins
    SELECT l.g, now() - make_interval(secs => l.age_s) AS occurred_at,
        s.tenant_id, CASE WHEN o.outcome <> 'unknown_user' THEN u.id END AS user_id,
        CASE WHEN o.outcome = 'unknown_user' THEN 'nobody' || l.g || '@' || split_part(u.email::text, '@', 2)
             WHEN m.method IN ('password', 'magic_link') THEN u.email::text END::citext AS email,
        o.outcome, m.method,
        CASE WHEN s.kind = 'staff' THEN ('198.51.100.' || (10 + u.id % 40))::inet
             ELSE ((ARRAY[24, 37, 45, 62, 73, 81, 92, 98, 104, 142, 151, 174, 185, 203])[1 + (hashint8(u.id * 3 + 1) & 2147483647) % 14]
                   || '.' || (hashint8(u.id * 5 + 1) & 255) || '.' || (hashint8(u.id * 7 + 1) & 255)
                   || '.' || (1 + (hashint8(u.id * 11 + l.g % 3) & 2147483647) % 254))::inet END AS ip,
        (ARRAY['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
               'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
               'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
               'Marketly/7.31 (iPhone; iOS 17.4; Scale/3.00)',
               'Marketly/7.30 (Android 14; Pixel 8)'])[1 + (hashint8(u.id * 13 + 1) & 2147483647) % 5] AS user_agent,
        CASE split_part(u.locale, '-', 2) WHEN 'US' THEN 'US' WHEN 'GB' THEN 'GB' WHEN 'DE' THEN 'DE'
             WHEN 'FR' THEN 'FR' WHEN 'JP' THEN 'JP' WHEN 'NL' THEN 'NL' WHEN 'IE' THEN 'IE' END AS country,
        CASE o.outcome WHEN 'bad_password' THEN 'password mismatch' WHEN 'mfa_failed' THEN 'invalid TOTP code'
             WHEN 'locked' THEN 'locked after 10 failures' WHEN 'sso_error' THEN 'SAML response signature invalid'
             WHEN 'suspended' THEN 'account suspended' END AS detail
    FROM seed_logins l
    -- a user who existed at the time
    JOIN identity.users u ON u.id = 1 + floor(greatest(1, floor(2000 * :volume * (1 - power(least(1.0, l.age_s / 155520000), 2 / 3.0))))
                                            * power(l.u1, 0.6))::bigint
    JOIN seed_users s ON s.id = u.id
    CROSS JOIN LATERAL (SELECT CASE
            WHEN s.kind = 'staff' THEN 'sso'
            WHEN s.kind = 'merchant' AND s.tenant_id BETWEEN 4 AND 8 THEN 'sso'
            WHEN u.password_hash IS NULL THEN CASE WHEN l.u3 < 0.3 THEN 'passkey' ELSE 'sso' END
            WHEN l.u3 < 0.62 THEN 'password' WHEN l.u3 < 0.75 THEN 'refresh'
            WHEN l.u3 < 0.9 THEN 'passkey' ELSE 'magic_link' END AS method) m
    CROSS JOIN LATERAL (SELECT CASE
            WHEN u.status = 'suspended' THEN 'suspended'
            WHEN m.method = 'password' AND l.u2 < 0.07 THEN 'bad_password'
            WHEN m.method = 'password' AND l.u2 < 0.075 THEN 'locked'
            WHEN m.method = 'password' AND l.u2 < 0.11 THEN 'unknown_user'
            WHEN u.mfa_enabled AND l.u2 > 0.985 THEN 'mfa_failed'
            WHEN m.method = 'sso' AND l.u2 > 0.995 THEN 'sso_error'
            ELSE 'success' END::identity.login_outcome AS outcome) o
    WHERE NOT l.burst
    UNION ALL
    -- the burst
    SELECT l.g, date_trunc('day', now() - interval '23 days') + interval '2 hours' + make_interval(secs => l.u1 * 7200),
        1, NULL, ('user' || (hashint8(l.g) & 65535) || '@' || (ARRAY['gmail.com', 'yahoo.com', 'hotmail.com'])[1 + l.g % 3])::citext,
        CASE WHEN l.u2 < 0.35 THEN 'rate_limited' WHEN l.u2 < 0.85 THEN 'unknown_user' ELSE 'bad_password' END::identity.login_outcome,
        'password',
        ('185.220.10' || (l.g % 6) || '.' || (17 + l.g % 5))::inet,
        'python-requests/2.31.0', 'NL',
        CASE WHEN l.u2 < 0.35 THEN 'ip over 30 attempts/minute' END
    FROM seed_logins l WHERE l.burst
) x;

DROP TABLE seed_founders, seed_users, seed_logins;

RESET session_replication_role;
