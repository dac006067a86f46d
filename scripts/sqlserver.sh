#!/usr/bin/env bash
# A real SQL Server for the SQL scenarios (Database:Provider=SqlServer), in the official container.
# Needs Docker (not run in CI; CI uses the embedded responder and PostgreSQL).
#   start   pulls and starts mcr.microsoft.com/mssql/server on 127.0.0.1:$SQLSERVER_PORT (default 1433),
#           waits until it accepts logins, and prints ONLY shell export lines on stdout:
#               eval "$(scripts/sqlserver.sh start)"
#   stop    removes the container
#   status  says whether it runs
# The sa password defaults to the one in appsettings.json (a local, loopback-only development container);
# set SQLSERVER_SA_PASSWORD to use another, and pass the printed connection string to the app.
set -euo pipefail

usage() { echo "usage: $0 start|stop|status" >&2; exit 2; }
log() { echo "sqlserver.sh: $*" >&2; }

name=diagnosticscenarios-sqlserver
image=${SQLSERVER_IMAGE:-mcr.microsoft.com/mssql/server:2022-latest}
port=${SQLSERVER_PORT:-1433}
password=${SQLSERVER_SA_PASSWORD:-DiagScenarios#2025}

command -v docker >/dev/null || { log "docker is not installed"; exit 1; }

start() {
  if [ -z "$(docker ps -q -f "name=^${name}$")" ]; then
    docker rm -f "$name" >/dev/null 2>&1 || true
    log "starting $image on 127.0.0.1:$port"
    docker run -d --name "$name" -e ACCEPT_EULA=Y -e "MSSQL_SA_PASSWORD=$password" \
      -p "127.0.0.1:$port:1433" "$image" >&2
  fi

  log "waiting for SQL Server to accept logins"
  for _ in $(seq 1 60); do
    if docker exec "$name" /bin/sh -c \
      "for t in /opt/mssql-tools18/bin/sqlcmd /opt/mssql-tools/bin/sqlcmd; do [ -x \$t ] && exec \$t -C -S localhost -U sa -P \"\$MSSQL_SA_PASSWORD\" -Q 'SELECT 1'; done; exit 1" >/dev/null 2>&1; then
      local connection="Server=tcp:127.0.0.1,$port;User ID=sa;Password=$password;TrustServerCertificate=True"
      echo "export SQLSERVER_CONNECTION_STRING='$connection'"
      echo "export ConnectionStrings__SqlServer='$connection'"
      return
    fi
    sleep 2
  done
  log "SQL Server did not accept logins within 120 s; see: docker logs $name"
  exit 1
}

stop() { docker rm -f "$name" >/dev/null 2>&1 && log "removed $name" || log "not running"; }

status() {
  if [ -n "$(docker ps -q -f "name=^${name}$")" ]; then
    echo "running on 127.0.0.1:$port"
  else
    echo "not running"
    return 3
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) usage ;;
esac
