"""Functions the read-only guard refuses by name, on every engine, whatever the engine's
metadata says: the hand-kept lists.

They name functions that write, change the session, run SQL given as text, sleep or lock,
or reach files or hosts outside the database.  Engines that publish no volatility
(MySQL/MariaDB, SQLite, Snowflake) rely on these lists alone; where an engine does
publish it (PostgreSQL, Redshift, DuckDB), :mod:`sqlnb.sql.functions` adds what its
metadata says.  Both :mod:`sqlnb.sql.guard` and :mod:`sqlnb.sql.functions` read this
module; it imports neither.
"""

from __future__ import annotations

import re

# Functions that write, change session state, run SQL given as text, sleep or lock, or
# reach files/hosts outside the database.  Lower-case names; refused in any dialect.
FORBIDDEN_FUNCTIONS = frozenset(
    {
        # PostgreSQL / Redshift
        "nextval",
        "setval",
        "lastval",
        "set_config",
        "setseed",
        "pg_advisory_lock",
        "pg_advisory_xact_lock",
        "pg_try_advisory_lock",
        "pg_try_advisory_xact_lock",
        "pg_advisory_lock_shared",
        "pg_advisory_xact_lock_shared",
        "pg_try_advisory_lock_shared",
        "pg_try_advisory_xact_lock_shared",
        "pg_advisory_unlock",
        "pg_advisory_unlock_shared",
        "pg_advisory_unlock_all",
        "pg_terminate_backend",
        "pg_cancel_backend",
        "pg_reload_conf",
        "pg_rotate_logfile",
        "pg_read_file",
        "pg_read_binary_file",
        "pg_ls_dir",
        "pg_stat_file",
        "pg_sleep",
        "pg_sleep_for",
        "pg_sleep_until",
        "pg_notify",
        "pg_logical_emit_message",
        "pg_switch_wal",
        "pg_create_restore_point",
        "pg_promote",
        "pg_export_snapshot",
        "pg_file_write",
        "pg_file_rename",
        "pg_file_unlink",
        "pg_file_sync",
        "pg_logdir_ls",
        "pg_ls_logdir",
        "pg_ls_waldir",
        "pg_ls_tmpdir",
        "pg_ls_archive_statusdir",
        "pg_backup_start",
        "pg_backup_stop",
        "pg_start_backup",
        "pg_stop_backup",
        "pg_wal_replay_pause",
        "pg_wal_replay_resume",
        "pg_log_backend_memory_contexts",
        "pg_stat_reset",
        "pg_stat_reset_shared",
        "pg_stat_reset_single_table_counters",
        "pg_stat_reset_single_function_counters",
        "pg_stat_reset_slru",
        "pg_stat_reset_replication_slot",
        "pg_stat_statements_reset",
        "pg_logical_slot_get_changes",
        "pg_logical_slot_get_binary_changes",
        "pg_replication_slot_advance",
        "pg_copy_logical_replication_slot",
        "pg_copy_physical_replication_slot",
        "pg_import_system_collations",
        "lo_import",
        "lo_export",
        "lo_create",
        "lo_creat",
        "lo_unlink",
        "lo_from_bytea",
        "lo_put",
        "lo_open",
        "lo_close",
        "lo_truncate",
        "lo_truncate64",
        "lowrite",
        "lo_write",
        "dblink",
        "dblink_exec",
        "dblink_connect",
        "dblink_connect_u",
        "dblink_open",
        "dblink_fetch",
        "dblink_close",
        "dblink_send_query",
        "dblink_get_result",
        "dblink_disconnect",
        "query_to_xml",
        "query_to_xmlschema",
        "query_to_xml_and_xmlschema",
        "cursor_to_xml",
        "cursor_to_xmlschema",
        "table_to_xml",
        "txid_current",
        "pg_current_xact_id",
        "pg_create_logical_replication_slot",
        "pg_create_physical_replication_slot",
        "pg_drop_replication_slot",
        # MySQL / MariaDB
        "load_file",
        "sleep",
        "benchmark",
        "get_lock",
        "release_lock",
        "release_all_locks",
        "sys_exec",
        "sys_eval",
        "master_pos_wait",
        "source_pos_wait",
        # SQLite
        "load_extension",
        "readfile",
        "writefile",
        "edit",
        "fts3_tokenizer",
        "fsdir",
        "zipfile",
        # DuckDB (file and network access, SQL run from text, other databases)
        "read_csv",
        "read_csv_auto",
        "read_parquet",
        "parquet_scan",
        "read_json",
        "read_json_auto",
        "read_json_objects",
        "read_json_objects_auto",
        "read_ndjson",
        "read_ndjson_auto",
        "read_ndjson_objects",
        "read_text",
        "read_blob",
        "glob",
        "sniff_csv",
        "parquet_metadata",
        "parquet_schema",
        "parquet_file_metadata",
        "parquet_kv_metadata",
        "parquet_bloom_probe",
        "read_xlsx",
        "st_read",
        "delta_scan",
        "iceberg_scan",
        "iceberg_metadata",
        "iceberg_snapshots",
        "query",
        "query_table",
        "json_execute_serialized_sql",
        "sqlite_scan",
        "sqlite_attach",
        "postgres_scan",
        "postgres_scan_pushdown",
        "postgres_attach",
        "postgres_query",
        "postgres_execute",
        "mysql_scan",
        "mysql_query",
        "mysql_execute",
        "load_aws_credentials",
        "getenv",
        "wait_for_executed_gtid_set",
        "wait_until_sql_thread_after_gtids",
        # Snowflake (besides every SYSTEM$ function): stage metadata, and URLs that hand out
        # access to stage files
        "infer_schema",
        "get_presigned_url",
        "build_scoped_file_url",
        "build_stage_file_url",
    }
)


# Where the general reason ("can write, change the session or reach outside the
# database") says too little.
FUNCTION_WHY = {
    "get_presigned_url": "hands out a URL that gives anyone holding it the files of a stage "
    "(Snowflake has no read-only session to stop that)",
    "build_scoped_file_url": "hands out a URL to the files of a stage",
    "build_stage_file_url": "hands out a URL to the files of a stage",
}


# Prefixes of function families that are refused whole: PostgreSQL's large objects,
# dblink, advisory locks, server files, WAL/replication/backup control and statistics resets.
FORBIDDEN_PREFIXES = re.compile(
    r"^(?:dblink|lo_|pg_advisory|pg_try_advisory|pg_stat_reset|pg_file_|pg_ls_|pg_read_"
    r"|pg_logical_|pg_replication_|pg_create_|pg_drop_|pg_copy_|pg_wal_|pg_backup_|pg_sleep"
    r"|system\$)",
    re.I,
)
# ... and per dialect: DuckDB's file readers and scanners of other databases.
DIALECT_PREFIXES = {
    "duckdb": re.compile(
        r"^(?:read_|parquet_|iceberg_|delta_|postgres_|mysql_|sqlite_"
        r"|ducklake_|.*_scan$)",
        re.I,
    ),
}

#: the reason given for a refused name that FUNCTION_WHY does not explain further
GENERAL_WHY = "can write, change the session or reach outside the database"


def refused_by_name(name: str, dialect: str) -> str | None:
    """Why a call of ``name`` (lower case) is refused in ``dialect`` by these lists, or None
    when they do not refuse it."""
    prefixes = DIALECT_PREFIXES.get(dialect)
    if name in FORBIDDEN_FUNCTIONS or FORBIDDEN_PREFIXES.match(name) or (prefixes and prefixes.match(name)):
        return FUNCTION_WHY.get(name, GENERAL_WHY)
    return None
