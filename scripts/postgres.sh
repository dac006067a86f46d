#!/usr/bin/env bash
# A local PostgreSQL for the SQL scenarios (Database:Provider=PostgreSql) and their tests.
#   start   installs PostgreSQL from Debian if missing (as root), initialises a cluster in $POSTGRES_DATA_DIR,
#           starts it on 127.0.0.1 (a free port, kept across restarts) with max_connections above the app's
#           pool of 200, creates the role and database, and prints ONLY shell export lines on stdout:
#               eval "$(scripts/postgres.sh start)"
#   stop    stops it (fast shutdown: open connections are dropped, as when a database server goes down)
#   status  says whether it runs, and where
# Progress goes to stderr. Works as root (the cluster runs as the postgres user) or as a normal user.
set -euo pipefail

usage() { echo "usage: $0 start|stop|status" >&2; exit 2; }
log() { echo "postgres.sh: $*" >&2; }

data_dir=${POSTGRES_DATA_DIR:-/tmp/diagnosticscenarios-postgres}
role=diagscenarios
password=diagscenarios
database=diagscenarios
# The app's pool holds up to 200 connections; the default of 100 would refuse the demo load. compare --family sql holds
# three servers' pools of 120 for a moment (the one measured next, idle; the one after it, opening; stragglers of the one
# just gone): 400 leaves room for all of them.
max_connections=400

find_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  [ -n "$dir" ] && [ -x "$dir/initdb" ] && echo "$dir"
}

bin=$(find_bin || true)
if [ -z "$bin" ] && [ "${1:-}" = start ]; then
  if [ "$(id -u)" -ne 0 ]; then
    log "PostgreSQL is not installed; run: sudo apt-get install postgresql"
    exit 1
  fi
  log "installing PostgreSQL from Debian"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  bin=$(find_bin)
fi

# As root, every PostgreSQL command runs as the postgres user: the server refuses to run as root.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

port_file="$data_dir/.port"

# A port below Linux's ephemeral range (32768 and up), as the tests' servers pick theirs: a port in that range may be the
# local end of any outgoing connection (after a load run, thousands linger in TIME_WAIT) and the bind then fails.
# Random, not the first free one, so two clusters started at once do not pick the same.
free_port() {
  local p try
  for try in $(seq 1 100); do
    p=$(( 20000 + RANDOM % 12768 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return
    fi
  done
  log "no free port between 20000 and 32767 in 100 tries"
  exit 1
}

is_running() { [ -n "$bin" ] && [ -f "$data_dir/PG_VERSION" ] && as_owner "$bin/pg_ctl" -D "$data_dir" status >/dev/null 2>&1; }

start() {
  if [ ! -f "$data_dir/PG_VERSION" ]; then
    log "initialising a cluster in $data_dir"
    mkdir -p "$data_dir"
    [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$data_dir"
    chmod 700 "$data_dir"
    as_owner "$bin/initdb" -D "$data_dir" -U postgres --auth-local=trust --auth-host=scram-sha-256 -E UTF8 >&2
  fi

  if [ -f "$port_file" ]; then
    port=$(cat "$port_file")
  else
    port=$(free_port)
    echo "$port" | as_owner tee "$port_file" >/dev/null
  fi

  if is_running; then
    log "already running on 127.0.0.1:$port"
  else
    local attempt
    for attempt in 1 2 3; do
      log "starting on 127.0.0.1:$port (max_connections=$max_connections)"
      if as_owner "$bin/pg_ctl" -D "$data_dir" -l "$data_dir/server.log" -w -t 60 \
        -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$data_dir -c max_connections=$max_connections" \
        start >&2; then
        break
      fi
      # Someone took the port since it was picked (or since the last start): another one, kept from now on.
      if [ "$attempt" -lt 3 ] && tail -n 20 "$data_dir/server.log" | grep -q "could not bind"; then
        port=$(free_port)
        echo "$port" | as_owner tee "$port_file" >/dev/null
        log "the port was taken; trying 127.0.0.1:$port"
        continue
      fi
      log "the server did not start; the end of its log:"
      tail -n 20 "$data_dir/server.log" >&2
      exit 1
    done
  fi

  psql_admin() { as_owner "$bin/psql" -h "$data_dir" -p "$port" -U postgres -v ON_ERROR_STOP=1 -qAt "$@"; }
  if [ "$(psql_admin -d postgres -c "SELECT 1 FROM pg_roles WHERE rolname = '$role'")" != 1 ]; then
    log "creating role $role"
    psql_admin -d postgres -c "CREATE ROLE $role LOGIN PASSWORD '$password'" >&2
  fi
  if [ "$(psql_admin -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$database'")" != 1 ]; then
    log "creating database $database"
    psql_admin -d postgres -c "CREATE DATABASE $database OWNER $role" >&2
  fi

  # The pool size and the connect timeout are the app's (SqlScenarioDatabase), added to any string that names none.
  local connection="Host=127.0.0.1;Port=$port;Username=$role;Password=$password;Database=$database"
  echo "export POSTGRES_CONNECTION_STRING='$connection'"
  echo "export ConnectionStrings__PostgreSql='$connection'"
}

stop() {
  if is_running; then
    log "stopping"
    as_owner "$bin/pg_ctl" -D "$data_dir" -m fast -w stop >&2
  else
    log "not running"
  fi
}

status() {
  if is_running; then
    echo "running on 127.0.0.1:$(cat "$port_file") (data: $data_dir)"
  else
    echo "not running (data: $data_dir)"
    return 3
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) usage ;;
esac
