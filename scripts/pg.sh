# Sourced by scripts/dev: installs what is missing and runs the private PostgreSQL cluster.
# Needs ROOT set to the repository root.

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_PORT=${LEDGER_PG_PORT:-54329}
PG_HOME="$ROOT/.ledger/pg"
PG_DATA="$PG_HOME/data"
PG_LOG="$PG_HOME/postgres.log"
PG_OS_USER=ledgerpg

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        echo "need root (or sudo) to run: $*" >&2; return 1
    fi
}

apt_install() {
    echo "== installing $* with apt-get" >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

ensure_packages() {
    local missing=()
    [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ] || missing+=(postgresql-15)
    command -v psql >/dev/null || missing+=(postgresql-client-15)
    [ -f /usr/include/postgresql/libpq-fe.h ] || missing+=(libpq-dev)
    command -v pkg-config >/dev/null || missing+=(pkg-config)
    command -v python3 >/dev/null || missing+=(python3)
    if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
    # The store fake and the scenario runner's minting need python3's cryptography: Debian's
    # package, or from PyPI when the python3 on PATH is not Debian's (pyenv) and cannot see it.
    if ! python3 -c 'import cryptography' 2>/dev/null; then
        apt_install python3-cryptography || true
        python3 -c 'import cryptography' 2>/dev/null ||
            python3 -m pip install --quiet --disable-pip-version-check --user cryptography >&2
    fi
}

ensure_toolchain() {
    ensure_packages
    if ! command -v swift >/dev/null; then
        if [ -x /opt/swift/usr/bin/swift ]; then export PATH="/opt/swift/usr/bin:$PATH"; else
            echo "no Swift toolchain found (looked on PATH and in /opt/swift)" >&2; exit 1
        fi
    fi
}

# The socket lives in the cluster folder unless that path is too long for a unix socket (107 bytes).
pg_socket_dir() {
    local dir="$PG_HOME/run"
    if [ ${#dir} -gt 80 ]; then
        dir="/tmp/ledger-pg-$(printf '%s' "$PG_HOME" | cksum | cut -d' ' -f1)"
    fi
    printf '%s' "$dir"
}

# The CPU time each server's processes have used so far, in clock ticks, one line: for each
# postmaster PID given, its own and its reaped children's, and each live child's (a backend that
# exits moves from the second to the first); a process without children (pgbouncer) counts its
# own. "-" in, "-" out: a server that is not on this machine. For the benchmarks' CPU figures.
pg_cpu_ticks() { # PIDs
    python3 - "$@" <<'PY'
import os, sys
def fields(pid):  # /proc/PID/stat after "(comm) ": state, ppid, …, utime, stime, cutime, cstime
    text = open(f"/proc/{pid}/stat").read()
    return text[text.rindex(")") + 2:].split()
totals = {pm: sum(int(x) for x in fields(pm)[11:15]) for pm in sys.argv[1:] if pm != "-"}
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        g = fields(pid)
    except OSError:
        continue
    if g[1] in totals:
        totals[g[1]] += int(g[11]) + int(g[12])
print(" ".join(str(totals.get(pm, "-")) for pm in sys.argv[1:]))
PY
}

# PostgreSQL refuses to run as root: when we are root, the cluster belongs to a system user.
pg_run() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u "$PG_OS_USER" -- "$@"
    else
        "$@"
    fi
}

# When root: makes the user the servers run as, and hands it the folders given (by default the
# private cluster's and its socket's), which must be reachable by it.
pg_prepare_owner() {
    [ "$(id -u)" -eq 0 ] || return 0
    id -u "$PG_OS_USER" >/dev/null 2>&1 ||
        useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$PG_OS_USER"
    [ $# -gt 0 ] || set -- "$PG_HOME" "$(pg_socket_dir)"
    # Hand the folders over once: a recursive chown of a running cluster's data races with the
    # files the server creates and removes (a test dropping its database), and fails on them.
    local dir
    for dir in "$@"; do
        if [ "$(stat -c %U "$dir")" != "$PG_OS_USER" ]; then chown -R "$PG_OS_USER" "$dir"; fi
    done
    # Every folder above them must be traversable by that user.
    if ! runuser -u "$PG_OS_USER" -- test -x "$1"; then
        echo "the user $PG_OS_USER cannot reach $1; make its parent folders world-executable (chmod o+x)" >&2
        exit 1
    fi
}

pg_private_status() {
    [ -f "$PG_DATA/PG_VERSION" ] || { echo "no private cluster at $PG_DATA"; return 3; }
    pg_run "$PG_BIN/pg_ctl" -D "$PG_DATA" status
}

# shared_buffers for the private cluster: $LEDGER_PG_SHARED_BUFFERS, else a quarter of the
# machine's memory (PostgreSQL's own starting advice), between 128MB and 8GB. Given at every
# start, so a cluster made by an older checkout gets it too. The ledger's lookups stay within
# their targets only while the indexes and tables they read are in shared buffers: about 100 MB
# per million events (BENCHMARKS.md, "The queries at 10M and the cache").
pg_shared_buffers() {
    if [ -n "${LEDGER_PG_SHARED_BUFFERS:-}" ]; then
        echo "$LEDGER_PG_SHARED_BUFFERS"
        return
    fi
    local kb mb
    kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo 2>/dev/null || true)
    mb=$(( ${kb:-524288} / 4096 ))
    [ "$mb" -lt 128 ] && mb=128
    [ "$mb" -gt 8192 ] && mb=8192
    echo "${mb}MB"
}

pg_private_start() {
    ensure_packages
    local sock
    sock=$(pg_socket_dir)
    mkdir -p "$PG_HOME" "$sock"
    pg_prepare_owner
    if [ ! -f "$PG_DATA/PG_VERSION" ]; then
        echo "== creating a private PostgreSQL cluster in $PG_DATA" >&2
        rm -rf "$PG_DATA"
        pg_run "$PG_BIN/initdb" -D "$PG_DATA" -U ledger --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null
        cat >>"$PG_DATA/postgresql.conf" <<CONF
# private cluster of PurchaseLedger (scripts/pg.sh)
listen_addresses = ''
unix_socket_directories = '$sock'
port = $PG_PORT
max_connections = 300
max_locks_per_transaction = 256
max_wal_size = 4GB
log_min_messages = warning
CONF
    fi
    if ! pg_run "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
        local buffers
        buffers=$(pg_shared_buffers)
        echo "== starting the private PostgreSQL cluster (socket in $sock, shared_buffers $buffers)" >&2
        pg_run "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 120 \
            -o "-k $sock -p $PG_PORT -c shared_buffers=$buffers" start >/dev/null
    fi
    if ! psql "host=$sock port=$PG_PORT user=ledger dbname=postgres" -Atqc "SELECT 1 FROM pg_database WHERE datname = 'ledger'" | grep -q 1; then
        psql "host=$sock port=$PG_PORT user=ledger dbname=postgres" -qc "CREATE DATABASE ledger" >/dev/null
    fi
}

pg_private_stop() {
    if [ -f "$PG_DATA/PG_VERSION" ] && pg_run "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
        pg_run "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w stop
    else
        echo "the private cluster is not running"
    fi
}

# Sets DATABASE_URL (the ledger's database) and LEDGER_TEST_SERVER (a server conninfo without
# dbname, where tests and scenarios create their own databases).
ledger_database() {
    if [ -n "${DATABASE_URL:-}" ]; then
        export LEDGER_TEST_SERVER=${LEDGER_TEST_SERVER:-$DATABASE_URL}
        return 0
    fi
    pg_private_start
    local sock
    sock=$(pg_socket_dir)
    export LEDGER_TEST_SERVER="host=$sock port=$PG_PORT user=ledger"
    export DATABASE_URL="host=$sock port=$PG_PORT user=ledger dbname=ledger"
    export LEDGER_PG_BIN="$PG_BIN" LEDGER_PG_DATA="$PG_DATA" LEDGER_PG_OS_USER="$PG_OS_USER"
}
