#!/usr/bin/env bash
# Make sure the database servers the test suite talks to are installed and running:
# PostgreSQL (127.0.0.1:5432), MariaDB (127.0.0.1:3306, test user sqlnb/sqlnb) and
# PgBouncer (127.0.0.1:6432, md5 auth, fronting PostgreSQL as the local Redshift stand-in;
# 127.0.0.1:6433 the same in transaction pooling mode).
# Idempotent: safe to run on a machine where they already run.
set -euo pipefail

need_install=()
command -v pg_ctlcluster >/dev/null 2>&1 || need_install+=(postgresql)
[ -x /usr/sbin/mariadbd ] || need_install+=(mariadb-server)
command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || need_install+=(pgbouncer)
if [ ${#need_install[@]} -gt 0 ]; then
  echo "services: installing ${need_install[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${need_install[@]}" >/dev/null
fi

wait_for() {  # wait_for NAME COMMAND...
  local name=$1; shift
  for _ in $(seq 1 60); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  echo "services: $name did not come up" >&2
  return 1
}

# PostgreSQL
PG_VERSION=$(ls /etc/postgresql | sort -V | tail -n1)
HBA=/etc/postgresql/$PG_VERSION/main/pg_hba.conf
if ! grep -q "sqlnb-tests" "$HBA" 2>/dev/null; then
  # the tests connect over loopback as postgres without a password (trust), as on the
  # project's machines; a freshly installed server asks for one, so allow loopback first
  { echo "host all all 127.0.0.1/32 trust  # sqlnb-tests"; echo "host all all ::1/128 trust  # sqlnb-tests"; cat "$HBA"; } > "$HBA.new"
  mv "$HBA.new" "$HBA"
  chown postgres:postgres "$HBA" 2>/dev/null || true
  pg_ctlcluster --skip-systemctl-redirect "$PG_VERSION" main reload 2>/dev/null || true
fi
if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  pg_ctlcluster --skip-systemctl-redirect "$PG_VERSION" main start || true
fi
wait_for postgresql pg_isready -q -h 127.0.0.1 -p 5432

# MariaDB
if ! mysqladmin --protocol=socket -uroot status >/dev/null 2>&1; then
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
fi
wait_for mariadb mysqladmin --protocol=socket -uroot status
mysql --protocol=socket -uroot <<'SQL'
CREATE USER IF NOT EXISTS 'sqlnb'@'127.0.0.1' IDENTIFIED VIA mysql_native_password USING PASSWORD('Sq1nb-pw');
CREATE USER IF NOT EXISTS 'sqlnb'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('Sq1nb-pw');
GRANT ALL PRIVILEGES ON *.* TO 'sqlnb'@'127.0.0.1' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO 'sqlnb'@'localhost' WITH GRANT OPTION;
FLUSH PRIVILEGES;
SQL

# A PostgreSQL role with an md5 password for PgBouncer (redshift-connector cannot do SCRAM)
psql -q -h 127.0.0.1 -U postgres -d postgres -v ON_ERROR_STOP=1 <<'SQL'
SET password_encryption = 'md5';
DO $$BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'sqlnb') THEN
    CREATE ROLE sqlnb LOGIN SUPERUSER CREATEDB;
  END IF;
END$$;
ALTER ROLE sqlnb PASSWORD 'Sq1nb-pw';
SQL

# PgBouncer on 6432
PGB_DIR=/var/tmp/sqlnb-pgbouncer
if ! pg_isready -q -h 127.0.0.1 -p 6432 -d pgbouncer 2>/dev/null || ! [ -f "$PGB_DIR/pgbouncer.ini" ]; then
  mkdir -p "$PGB_DIR"
  md5=$(printf '%s' "Sq1nb-pwsqlnb" | md5sum | cut -d' ' -f1)
  printf '"sqlnb" "md5%s"\n' "$md5" > "$PGB_DIR/userlist.txt"
  cat > "$PGB_DIR/pgbouncer.ini" <<INI
[databases}
* = host=127.0.0.1 port=5432
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = 6432
auth_type = md5
auth_file = $PGB_DIR/userlist.txt
pool_mode = session
max_client_conn = 200
default_pool_size = 50
ignore_startup_parameters = extra_float_digits,client_protocol_version,driver_version,os_version,driver_discovery_version
logfile = $PGB_DIR/pgbouncer.log
pidfile = $PGB_DIR/pgbouncer.pid
unix_socket_dir =
INI
  sed -i 's/^\[databases}/[databases]/' "$PGB_DIR/pgbouncer.ini"
  chown -R postgres:postgres "$PGB_DIR"
  if [ -f "$PGB_DIR/pgbouncer.pid" ]; then kill "$(cat "$PGB_DIR/pgbouncer.pid")" 2>/dev/null || true; sleep 0.5; fi
  PGB=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
  runuser -u postgres -- "$PGB" -d "$PGB_DIR/pgbouncer.ini"
fi
wait_for pgbouncer pg_isready -q -h 127.0.0.1 -p 6432

# A second PgBouncer on 6433 in transaction pooling mode: each transaction may run on
# another server connection, so session SETs are lost (what read-only sessions must
# survive). stats_users lets the tests read SHOW STATS (bytes sent) from its console.
PGB_TX_DIR=/var/tmp/sqlnb-pgbouncer-tx
if ! pg_isready -q -h 127.0.0.1 -p 6433 -d pgbouncer 2>/dev/null || ! [ -f "$PGB_TX_DIR/pgbouncer.ini" ]; then
  mkdir -p "$PGB_TX_DIR"
  md5=$(printf '%s' "Sq1nb-pwsqlnb" | md5sum | cut -d' ' -f1)
  printf '"sqlnb" "md5%s"\n' "$md5" > "$PGB_TX_DIR/userlist.txt"
  cat > "$PGB_TX_DIR/pgbouncer.ini" <<INI
[databases]
* = host=127.0.0.1 port=5432
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = 6433
auth_type = md5
auth_file = $PGB_TX_DIR/userlist.txt
pool_mode = transaction
max_client_conn = 200
default_pool_size = 20
stats_users = sqlnb
ignore_startup_parameters = extra_float_digits,client_protocol_version,driver_version,os_version,driver_discovery_version
logfile = $PGB_TX_DIR/pgbouncer.log
pidfile = $PGB_TX_DIR/pgbouncer.pid
unix_socket_dir =
INI
  chown -R postgres:postgres "$PGB_TX_DIR"
  if [ -f "$PGB_TX_DIR/pgbouncer.pid" ]; then kill "$(cat "$PGB_TX_DIR/pgbouncer.pid")" 2>/dev/null || true; sleep 0.5; fi
  PGB=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
  runuser -u postgres -- "$PGB" -d "$PGB_TX_DIR/pgbouncer.ini"
fi
wait_for pgbouncer-transaction pg_isready -q -h 127.0.0.1 -p 6433
echo "services: postgresql :5432, mariadb :3306, pgbouncer :6432 (session) and :6433 (transaction) ready"
