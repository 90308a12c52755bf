# Sourced by scripts/dev after scripts/pg.sh: a Citus cluster on this machine (a coordinator and
# two workers, each its own PostgreSQL server on a unix socket, under .ledger/citus), built from
# the vendored Citus source when the extension is not installed. For tests and trying the
# scale-out path on one machine; production runs Citus's own packages or the citusdata/citus
# images (docker-compose.yml, profile citus).

CITUS_HOME="$ROOT/.ledger/citus"
CITUS_BASE_PORT=${LEDGER_CITUS_PORT:-54340}
CITUS_NODES=(coordinator worker1 worker2)

citus_socket_dir() {
    local dir="$CITUS_HOME/run"
    if [ ${#dir} -gt 80 ]; then
        dir="/tmp/ledger-citus-$(printf '%s' "$CITUS_HOME" | cksum | cut -d' ' -f1)"
    fi
    printf '%s' "$dir"
}

citus_port() { # node index
    echo $(( CITUS_BASE_PORT + $1 ))
}

citus_server() { # node index: its conninfo without a database
    echo "host=$(citus_socket_dir) port=$(citus_port "$1") user=ledger"
}

citus_conninfo() { # node index, database
    echo "$(citus_server "$1") dbname=$2"
}

# The extension, installed into this machine's PostgreSQL 15: from the Debian packages when an
# earlier run or the operator installed it, else built from ../shared/vendor/citus-*.tar.gz
# (about 100 s on 2 cores). The build's headers come from postgresql-server-dev-15 at the
# installed server's own version, so apt does not upgrade the running server with it.
citus_ensure_installed() {
    ensure_packages
    local pkglib
    pkglib=$("$PG_BIN/pg_config" --pkglibdir)
    [ -f "$pkglib/citus.so" ] && return 0
    local tarball
    tarball=$(ls "$ROOT"/../shared/vendor/citus-*.tar.gz 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -z "$tarball" ]; then
        cat >&2 <<'HOW'
Citus is not installed and no source tarball was found in ../shared/vendor/. Install Citus's
own packages for PostgreSQL 15 (https://docs.citusdata.com/en/stable/installation/):
    curl https://install.citusdata.com/community/deb.sh | sudo bash
    sudo apt-get install -y postgresql-15-citus-13.2
or run the citusdata/citus images: docker compose --profile citus up
HOW
        return 1
    fi
    local server_version missing=()
    server_version=$(dpkg-query -W -f='${Version}' postgresql-15 2>/dev/null || true)
    [ -f "$($PG_BIN/pg_config --includedir-server)/postgres.h" ] ||
        missing+=("postgresql-server-dev-15${server_version:+=$server_version}")
    [ -f /usr/include/lz4.h ] || missing+=(liblz4-dev)
    [ -f /usr/include/zstd.h ] || missing+=(libzstd-dev)
    [ -f /usr/include/gssapi/gssapi.h ] || missing+=(libkrb5-dev)
    command -v make >/dev/null || missing+=(make)
    command -v gcc >/dev/null || missing+=(gcc)
    if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
    local build="$CITUS_HOME/build"
    echo "== building Citus from $(basename "$tarball") in $build (about 100 s on 2 cores)" >&2
    rm -rf "$build"
    mkdir -p "$build"
    tar -xzf "$tarball" -C "$build" --strip-components=1
    (
        cd "$build"
        ./configure PG_CONFIG="$PG_BIN/pg_config" --without-libcurl >"$build/configure.log" 2>&1 ||
            { tail -n 20 "$build/configure.log" >&2; exit 1; }
        make -j"$(nproc)" >"$build/make.log" 2>&1 || { tail -n 30 "$build/make.log" >&2; exit 1; }
        as_root make install >"$build/install.log" 2>&1 || { tail -n 20 "$build/install.log" >&2; exit 1; }
    )
    echo "== Citus $(sed -n 's/^PACKAGE_VERSION=//p' "$build/configure" | tr -d "'") installed into $pkglib" >&2
}

# Makes database $1 on every node, with the extension, and registers the workers with the
# coordinator for it (Citus keeps both per database). Idempotent.
citus_create_database() {
    local name=$1 i sock
    sock=$(citus_socket_dir)
    for i in "${!CITUS_NODES[@]}"; do
        if ! psql "$(citus_conninfo "$i" postgres)" -Atqc "SELECT 1 FROM pg_database WHERE datname = '$name'" | grep -q 1; then
            psql "$(citus_conninfo "$i" postgres)" -qc "CREATE DATABASE \"$name\"" >/dev/null
        fi
        psql "$(citus_conninfo "$i" "$name")" -qc "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS citus" >/dev/null
    done
    psql "$(citus_conninfo 0 "$name")" -qAt >/dev/null <<SQL
SELECT citus_set_coordinator_host('$sock', $(citus_port 0));
SELECT citus_add_node('$sock', $(citus_port 1)) WHERE NOT EXISTS (SELECT FROM pg_dist_node WHERE nodeport = $(citus_port 1));
SELECT citus_add_node('$sock', $(citus_port 2)) WHERE NOT EXISTS (SELECT FROM pg_dist_node WHERE nodeport = $(citus_port 2));
SQL
    if [ -n "${CITUS_AUDIT_2PC:-}" ]; then citus_audit_database "$name"; fi
}

# Every node's server log (pg_ctl -l): a command the entry point runs on a worker
# (ledger.execute_user_commands) sends its commands to the other nodes from that worker, and
# coordinates its 2PC there.
citus_node_logs() {
    local node
    for node in "${CITUS_NODES[@]}"; do echo "$CITUS_HOME/nodes/$node.log"; done
}

# Database $1's sessions on every node from now on log every command Citus sends to another
# node, with its connection, in their node's log (not to the client, whose output stays as it
# was): citus_audit_2pc reads them. Set on each node, not propagated. citus_create_database does
# this for every database it makes while CITUS_AUDIT_2PC is set (run-scenarios makes its own
# through it). Not the model-based test's: its thousands of commands wrote 650 MB of log, and the
# scenarios, the commands' check, the races and the killed worker cover the same write paths.
citus_audit_database() {
    local i
    for i in "${!CITUS_NODES[@]}"; do
        psql "$(citus_conninfo "$i" "$1")" -q -c "SET citus.enable_ddl_propagation = off" \
            -c "ALTER DATABASE \"$1\" SET citus.log_remote_commands = on" \
            -c "ALTER DATABASE \"$1\" SET log_min_messages = notice" \
            -c "ALTER DATABASE \"$1\" SET client_min_messages = warning" >/dev/null
    done
}

# A pooler between the two workers for database $1: pgbouncer in session mode on a unix socket in
# folder $2 (made; CITUS_POOLER_PORT, 6432 unless set), a pool per worker, trusting the nodes' user
# as the nodes do, and on each worker a row of pg_dist_poolinfo that sends its connections to the
# other worker through it. Citus reads the table on the node that connects, so the coordinator's
# connections stay direct. A command the entry point runs on a worker opens a new backend on the
# other worker for each transaction that spans both without it: Citus keeps no connection of a
# backend that serves another node (BENCHMARKS.md, "Why the claims in the user's transaction cost
# eight times"). Run as the nodes' OS user when we are root, since pgbouncer does not run as root.
citus_pooler_start() {
    local db=$1 dir=$2 port=${CITUS_POOLER_PORT:-6432} bouncer i
    bouncer=$(command -v pgbouncer || { [ -x /usr/sbin/pgbouncer ] && echo /usr/sbin/pgbouncer; } || true)
    [ -n "$bouncer" ] || { echo "no pgbouncer on PATH or in /usr/sbin (apt-get install pgbouncer)" >&2; return 1; }
    mkdir -p "$dir"
    {
        echo "[databases]"
        for i in 1 2; do echo "worker$i = host=$(citus_socket_dir) port=$(citus_port "$i") dbname=$db"; done
        cat <<INI
[pgbouncer]
listen_addr =
listen_port = $port
unix_socket_dir = $dir
auth_type = trust
auth_file = $dir/users.txt
pool_mode = session
default_pool_size = 50
max_client_conn = 500
pidfile = $dir/pgbouncer.pid
logfile = $dir/pgbouncer.log
log_connections = 0
log_disconnections = 0
INI
    } >"$dir/pgbouncer.ini"
    echo '"ledger" ""' >"$dir/users.txt"
    pg_prepare_owner "$dir"
    pg_run "$bouncer" -d -q "$dir/pgbouncer.ini"
    for i in $(seq 50); do
        [ -S "$dir/.s.PGSQL.$port" ] && [ -s "$dir/pgbouncer.pid" ] && break
        sleep 0.1
    done
    if ! [ -S "$dir/.s.PGSQL.$port" ] || ! [ -s "$dir/pgbouncer.pid" ]; then
        echo "pgbouncer did not start:" >&2
        cat "$dir/pgbouncer.log" >&2 2>/dev/null || true
        return 1
    fi
    for i in 1 2; do
        psql "$(citus_conninfo "$i" "$db")" -XAtq -v ON_ERROR_STOP=1 >/dev/null -c \
            "INSERT INTO pg_dist_poolinfo SELECT nodeid, 'host=$dir port=$port dbname=worker$(( 3 - i ))'
               FROM pg_dist_node WHERE groupid > 0 AND nodeport = $(citus_port $(( 3 - i )))"
    done
}

# The pooler of citus_pooler_start for database $1 in folder $2 stopped: the rows deleted, then
# pgbouncer (SIGTERM), and the folder removed. Safe when it is not running.
citus_pooler_stop() {
    local db=$1 dir=$2 i pid
    [ -d "$dir" ] || return 0
    for i in 1 2; do
        psql "$(citus_conninfo "$i" "$db")" -XAtqc "DELETE FROM pg_dist_poolinfo" >/dev/null 2>&1 || true
    done
    pid=$(cat "$dir/pgbouncer.pid" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; then
        for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    rm -rf "$dir"
}

# Whether every transaction that used two-phase commit in the nodes' logs since the offsets $1
# (citus_log_offset's) prepared every node it wrote (scripts/citus-2pc-audit); $2 names what
# ran, for the report.
citus_audit_2pc() {
    local out
    # shellcheck disable=SC2046
    if ! out=$(python3 "$ROOT/scripts/citus-2pc-audit" $(paste -d: <(citus_node_logs) <(echo "$1" | tr ',' '\n'))); then
        echo "Citus: the 2PC audit of $2: $out" >&2
        return 1
    fi
    echo "  the 2PC audit of $2: $out"
}

# Whether this Citus still leaves a COPY over a connection that read the shard out of the
# transaction's 2PC (scripts/citus/copy-2pc.sql): a line for the record, not a check. The
# registries' claims are router inserts because of it; once it says "prepares", they can return
# to one INSERT … SELECT per registry, and the 2PC audit would confirm it.
citus_probe_copy_2pc() {
    local name="ledger_citus_probe_$$" prepared version
    citus_create_database "$name"
    version=$(psql "$(citus_conninfo 0 "$name")" -Atqc "SELECT extversion FROM pg_extension WHERE extname = 'citus'")
    prepared=$(psql "$(citus_conninfo 0 "$name")" -X -q -f "$ROOT/scripts/citus/copy-2pc.sql" 2>&1 |
                   grep -c "issuing PREPARE TRANSACTION" || true)
    citus_drop_database "$name"
    if [ "$prepared" -ge 2 ]; then
        echo "  Citus $version prepares a COPY over a connection that read the shard: the claims could be set statements again"
    else
        echo "  Citus $version sends a plain COMMIT after a COPY over a connection that read the shard (its 2PC leaves it out): the claims stay router inserts"
    fi
}

# Each node's log size, comma-separated in the nodes' order: where an audit starts.
citus_log_offset() {
    local log sizes=()
    while read -r log; do sizes+=("$(wc -c <"$log")"); done < <(citus_node_logs)
    (IFS=,; echo "${sizes[*]}")
}

# Whether `ledger verify` and `verify --chain` pass on the ledger at conninfo $1; else says so,
# after $2 (what ran before), with their output.
citus_verify_passes() {
    "$CITUS_LEDGER" verify --database-url "$1" >"$CITUS_HOME/verify.out" 2>&1 &&
        "$CITUS_LEDGER" verify --chain --database-url "$1" >>"$CITUS_HOME/verify.out" 2>&1 && return 0
    echo "Citus: verify after $2 on the distributed ledger:" >&2
    cat "$CITUS_HOME/verify.out" >&2
    return 1
}

# Makes database $1 on the coordinator's server alone, without the extension: a ledger of one
# server's tables, to compare a distributed one with. citus_drop_database drops it.
citus_create_plain_database() {
    psql "$(citus_conninfo 0 postgres)" -qc "CREATE DATABASE \"$1\"" >/dev/null
}

# Drops database $1 on every node.
citus_drop_database() {
    local name=$1 i
    for i in "${!CITUS_NODES[@]}"; do
        psql "$(citus_conninfo "$i" postgres)" -q -c "SET client_min_messages = warning" \
            -c "DROP DATABASE IF EXISTS \"$name\" WITH (FORCE)" >/dev/null
    done
}

citus_start() {
    citus_ensure_installed
    local sock i node data
    sock=$(citus_socket_dir)
    mkdir -p "$CITUS_HOME/nodes" "$sock"
    pg_prepare_owner "$CITUS_HOME/nodes" "$sock"
    for i in "${!CITUS_NODES[@]}"; do
        node=${CITUS_NODES[$i]}
        data="$CITUS_HOME/nodes/$node"
        if [ ! -f "$data/PG_VERSION" ]; then
            echo "== creating the Citus $node in $data" >&2
            rm -rf "$data"
            pg_run "$PG_BIN/initdb" -D "$data" -U ledger --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null
            cat >>"$data/postgresql.conf" <<CONF
# Citus $node of PurchaseLedger (scripts/citus.sh)
shared_preload_libraries = 'citus'
max_prepared_transactions = 200
# The readers wait for Citus's recovery after a transaction that spanned two workers
# (ledger.read_horizon): every second rather than the default minute.
citus.recover_2pc_interval = '1s'
listen_addresses = ''
unix_socket_directories = '$sock'
port = $(citus_port "$i")
max_connections = 300
max_locks_per_transaction = 256
shared_buffers = 512MB
max_wal_size = 2GB
log_min_messages = warning
CONF
        fi
        # How a node reaches itself (a shard move, citus_rebalance_start): Citus's default,
        # localhost, is no address of a cluster without TCP. Added at start, so that a node made
        # before the setting gets it too.
        if ! grep -q '^citus.local_hostname' "$data/postgresql.conf"; then
            echo "citus.local_hostname = '$sock'" >>"$data/postgresql.conf"
        fi
        if ! pg_run "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then
            echo "== starting the Citus $node (port $(citus_port "$i"), socket in $sock)" >&2
            pg_run "$PG_BIN/pg_ctl" -D "$data" -l "$CITUS_HOME/nodes/$node.log" -w -t 120 start >/dev/null
        fi
    done
    citus_create_database ledger
}

citus_stop() {
    local i data
    for i in "${!CITUS_NODES[@]}"; do
        data="$CITUS_HOME/nodes/${CITUS_NODES[$i]}"
        if [ -f "$data/PG_VERSION" ] && pg_run "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then
            pg_run "$PG_BIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null
        fi
    done
}

citus_status() {
    local i
    for i in "${!CITUS_NODES[@]}"; do
        printf '%-12s ' "${CITUS_NODES[$i]}"
        pg_run "$PG_BIN/pg_ctl" -D "$CITUS_HOME/nodes/${CITUS_NODES[$i]}" status 2>&1 | head -n 1
    done
    psql "$(citus_conninfo 0 ledger)" -c "SELECT nodename, nodeport, noderole, isactive FROM pg_dist_node ORDER BY nodeport" 2>/dev/null || true
}

# The reference tables of database $1 (conninfo), schema-qualified, in name order, comma-separated.
citus_reference_tables() {
    psql "$1" -Atqc "SELECT string_agg(format('%s.%s', n.nspname, c.relname), ',' ORDER BY n.nspname, c.relname)
                       FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid
                       JOIN pg_namespace n ON n.oid = c.relnamespace
                      WHERE p.partmethod = 'n' AND p.repmodel = 't'"
}

# What `scripts/dev test` checks of the cluster: built or installed, started, its three nodes
# registered, then each check below, each in databases of its own, dropped after: every one a
# ledger that `ledger migrate` distributed by ledger.distribution_plan (docs/scale-out.md), but
# the ledgers of one server's tables the distributed ones are compared with.
citus_smoke() {
    citus_start >/dev/null || return 1
    local ok=0
    citus_probe_copy_2pc
    citus_check_new_database && citus_check_worker_appends && citus_check_moved_ledger && citus_check_distribution_plan &&
        citus_check_distributed_projection && citus_check_distributed_commands && citus_check_races && citus_check_private_clusters && citus_check_worker_killed &&
        citus_check_scenarios && citus_check_model || ok=1
    citus_stop
    return $ok
}

CITUS_REFERENCE_TABLES="ledger.api_keys,ledger.field_rules,ledger.products"
# Whether the ledger at conninfo $1 is placed as ledger.distribution_plan says: the catalogs as
# reference tables, the jobs on the coordinator in Citus's metadata, every other table of the plan
# distributed by its column, the log's owners' tables colocated with the log.
citus_check_placed() {
    local placed wrong
    placed=$(citus_reference_tables "$1")
    wrong=$(psql "$1" -Atqc "
        SELECT string_agg(d.table_name, ', ' ORDER BY d.table_name)
          FROM ledger.distribution_plan() d
          LEFT JOIN pg_dist_partition p ON p.logicalrelid = d.table_name::regclass
         WHERE d.placement <> 'reference'
           AND CASE WHEN d.placement = 'coordinator' THEN p.partmethod IS DISTINCT FROM 'n' OR p.repmodel IS DISTINCT FROM 's'
                    ELSE p.partmethod IS DISTINCT FROM 'h'
                         OR column_to_column_name(p.logicalrelid, p.partkey) IS DISTINCT FROM d.column_name
                         OR (d.placement = 'owner' AND p.colocationid IS DISTINCT FROM
                             (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'ledger.events'::regclass))
               END")
    if [ "$placed" != "$CITUS_REFERENCE_TABLES" ] || [ -n "$wrong" ]; then
        echo "Citus: reference tables '$placed' (expected '$CITUS_REFERENCE_TABLES'); not distributed by the plan: '$wrong'" >&2
        return 1
    fi
}
CITUS_LEDGER="$ROOT/.build/release/ledger"

# A new database: its three nodes active, `ledger migrate` placing the catalogs as reference
# tables and distributing every other table of the plan, `demo`, `verify` and a key (a write to a
# reference table, read on a worker); products
# declared, then `ledger rebuild`, which swaps in a new products table and places it again (its
# rows read on a worker); then what the next release's `ledger migrate` does there (every
# definition again, the field rules rewritten in their reference table) and more commands.
citus_check_new_database() {
    local name="ledger_citus_smoke_$$" url nodes placed ok=0
    citus_create_database "$name"
    url=$(citus_conninfo 0 "$name")
    nodes=$(psql "$url" -Atqc "SELECT count(*) FROM pg_dist_node WHERE isactive")
    if [ "$nodes" != 3 ]; then
        echo "Citus: $nodes active nodes, expected 3 (a coordinator and two workers)" >&2
        ok=1
    fi
    if [ $ok -eq 0 ]; then
        "$CITUS_LEDGER" migrate --database-url "$url" | sed 's/^/  /' || ok=1
        citus_check_placed "$url" || ok=1
        "$CITUS_LEDGER" demo --users 200 --database-url "$url" | sed 's/^/  /' &&
            "$CITUS_LEDGER" verify --database-url "$url" | sed 's/^/  /' &&
            "$CITUS_LEDGER" keys add --role reader --database-url "$url" >/dev/null &&
            [ "$(psql "$(citus_conninfo 1 "$name")" -Atqc "SELECT count(*) FROM ledger.api_keys")" = 1 ] || ok=1
        citus_check_products "$name" || ok=1
        citus_check_advice "$url" || ok=1
        if psql "$url" -qc "DELETE FROM ledger.schema_definitions" &&
            "$CITUS_LEDGER" migrate --database-url "$url" | sed 's/^/  /' &&
            "$CITUS_LEDGER" demo --write "$CITUS_HOME/more.ndjson" --events 300 --seed 7 >/dev/null; then
            # Exit 1: some demo lines are refused on purpose (the contract's refusals).
            "$CITUS_LEDGER" ingest "$CITUS_HOME/more.ndjson" --database-url "$url" >/dev/null
            [ $? -le 1 ] && "$CITUS_LEDGER" verify --database-url "$url" | sed 's/^/  /' || ok=1
        else
            ok=1
        fi
    fi
    citus_drop_database "$name"
    return $ok
}

# `ledger migrate` on the distributed ledger at conninfo $1 warns of nothing with Citus's recovery
# every second (scripts/dev citus), and names the setting when it runs every minute or never:
# the readers wait for it after each transaction that spans two workers (ledger.read_horizon).
citus_check_advice() {
    local admin ok=0 interval out
    admin="$(citus_conninfo 0 postgres)"
    for interval in default 1min -1; do
        if [ "$interval" != default ]; then
            psql "$admin" -Atq -c "ALTER SYSTEM SET citus.recover_2pc_interval = '$interval'" -c "SELECT pg_reload_conf()" >/dev/null
            sleep 0.2
        fi
        out=$("$CITUS_LEDGER" migrate --database-url "$1" 2>&1 >/dev/null)
        case "$interval" in
            default) [ -z "$out" ] || { echo "Citus: ledger migrate warned with recovery every second: $out" >&2; ok=1; } ;;
            1min) echo "$out" | grep -q "^warning: citus.recover_2pc_interval is 1min: the feed and the webhooks trail" ||
                { echo "Citus: ledger migrate did not warn of recovery every minute: $out" >&2; ok=1; } ;;
            -1) echo "$out" | grep -q "^warning: citus.recover_2pc_interval is -1 (off): the feed and the webhooks stop" ||
                { echo "Citus: ledger migrate did not warn of recovery off: $out" >&2; ok=1; } ;;
        esac
    done
    psql "$admin" -Atq -c "ALTER SYSTEM RESET citus.recover_2pc_interval" -c "SELECT pg_reload_conf()" >/dev/null
    [ $ok -eq 0 ] && echo "  ledger migrate warns when Citus's recovery runs every minute or never, and not every second"
    return $ok
}

# How many positions of its range each node of database $1 has handed out, "group:count" a node
# in node order (ledger.events_position_seq: node group g's first is g * 2^48 + 1). An append
# takes one on the node its statement runs on, and its event one on the node that holds it
# (ledger.event_on_owner_node).
citus_positions_taken() {
    local i
    for i in 0 1 2; do
        psql "$(citus_conninfo "$i" "$1")" -Atqc "
            SELECT g || ':' || (CASE WHEN is_called THEN last_value ELSE last_value - 1 END - (g::bigint << 48))
              FROM ledger.events_position_seq, (SELECT groupid AS g FROM pg_dist_local_group) AS l"
    done | paste -sd ' '
}

# The entry point on the users' workers (ledger.execute_user_commands). In a new database: a
# purchase sent to the coordinator by `ledger ingest` appends on the worker that holds its user's
# shard, in that worker's range of positions (node group g from g * 2^48 + 1), and takes no
# position of another node's range (its statements ran on that worker); a consume sent to each
# worker by a client connected there runs there, once: the first consumes, the second answers
# that it was consumed already; then a refund run on the other worker in a transaction block
# (where Citus runs it there) appends in the user's node group too; `ledger verify` finds the
# projections equal to the log.
citus_check_worker_appends() {
    local name="ledger_citus_worker_appends_$$" url ok=0 i out group expected before after other home
    citus_create_database "$name"
    "$CITUS_LEDGER" migrate --database-url "$(citus_conninfo 0 "$name")" >/dev/null || ok=1
    url=$(citus_conninfo 0 "$name")
    before=$(citus_positions_taken "$name")
    printf '%s\n' '{"type":"purchase","userId":"u-worker","storeCode":"AS","paymentSeq":"2026999000001","productId":"gems","productType":"CONSUMABLE","price":"0.99","currency":"USD","purchaseToken":"tok-worker","transactionId":"t-worker-1","purchaseTime":"2026-12-01T00:00:00Z"}' \
        >"$CITUS_HOME/worker-purchase.ndjson"
    printf '%s\n' '{"type":"consume","userId":"u-worker","paymentSeq":"2026999000001","purchaseToken":"tok-worker"}' \
        >"$CITUS_HOME/worker-consume.ndjson"
    out=$("$CITUS_LEDGER" ingest "$CITUS_HOME/worker-purchase.ndjson" --database-url "$url")
    echo "$out" | grep -q '"status":"recorded"' || { echo "Citus: the purchase was not recorded: $out" >&2; ok=1; }
    group=$(psql "$url" -Atqc "SELECT DISTINCT position >> 48 FROM ledger.events WHERE user_id = 'u-worker'")
    expected=$(psql "$url" -Atqc "SELECT p.groupid FROM pg_dist_placement p
                                   WHERE p.shardid = get_shard_id_for_distribution_column('ledger.events', 'u-worker')")
    if [ -z "$expected" ] || [ "$group" != "$expected" ] || [ "$group" = 0 ]; then
        echo "Citus: the purchase appended in node group(s) '$group', not on its user's worker (group $expected)" >&2
        ok=1
    fi
    home=$expected
    after=$(citus_positions_taken "$name")
    for i in $before; do
        [ "${i%%:*}" = "$home" ] && continue
        case " $after " in
            *" $i "*) ;;
            *) echo "Citus: the purchase took positions of node group ${i%%:*}, not only of its user's ($home): before '$before', after '$after'" >&2; ok=1 ;;
        esac
    done
    for i in 1 2; do
        out=$("$CITUS_LEDGER" ingest "$CITUS_HOME/worker-consume.ndjson" --database-url "$(citus_conninfo "$i" "$name")" 2>&1)
        expected='"status":"consumed"'
        [ "$i" = 2 ] && expected='"status":"alreadyConsumed"'
        echo "$out" | grep -q "$expected" || { echo "Citus: the consume sent to worker $i did not answer $expected: $out" >&2; ok=1; }
    done
    if [ "$(psql "$url" -Atqc "SELECT count(*) FROM ledger.events WHERE type = 'PaymentConsumed'")" != 1 ]; then
        echo "Citus: the consumes sent to the workers did not consume the payment once" >&2
        ok=1
    fi
    for i in 1 2; do
        [ "$(psql "$(citus_conninfo "$i" "$name")" -Atqc "SELECT groupid FROM pg_dist_local_group")" != "$home" ] && other=$i
    done
    out=$(psql "$(citus_conninfo "$other" "$name")" -Atq -v ON_ERROR_STOP=1 \
        -c "BEGIN" -c "SELECT status FROM ledger.refund('2026999000001', now(), NULL)" -c "COMMIT" 2>&1)
    group=$(psql "$url" -Atqc "SELECT position >> 48 FROM ledger.events WHERE type = 'PaymentRefunded'")
    if [ "$out" != recorded ] || [ "$group" != "$home" ]; then
        echo "Citus: a refund run on the other worker answered '$out' and appended in node group '$group', not its user's ($home)" >&2
        ok=1
    fi
    out=$("$CITUS_LEDGER" verify --database-url "$url" 2>&1) || { echo "Citus: verify after the workers' commands failed: $out" >&2; ok=1; }
    citus_drop_database "$name"
    [ $ok -eq 0 ] && echo "  a purchase appends on its user's worker; a consume sent to each worker runs there, once; a refund run on the other worker appends in its user's node group; verify is equal"
    return $ok
}

# The products of the database at conninfo $1, a line each.
citus_products() {
    psql "$1" -Atqc "SELECT store_code, product_id, product_type, price, currency FROM ledger.products ORDER BY 1, 2"
}

# Products (a projection placed as a reference table) in database $1: declared, rebuilt, and read
# on a worker after each; the second declaration of gems changes its price.
citus_check_products() {
    local url worker expected lines="$CITUS_HOME/products.ndjson"
    url=$(citus_conninfo 0 "$1")
    worker=$(citus_conninfo 2 "$1")
    expected=$'AS|premium_month|AUTO_RENEWABLE||\nGG|gems|CONSUMABLE|2.99|USD'
    printf '%s\n' '{"type":"product","storeCode":"GG","productId":"gems","productType":"CONSUMABLE","price":"1.99","currency":"USD"}' \
        '{"type":"product","storeCode":"AS","productId":"premium_month","productType":"AUTO_RENEWABLE"}' \
        '{"type":"product","storeCode":"GG","productId":"gems","productType":"CONSUMABLE","price":"2.99","currency":"USD"}' >"$lines"
    "$CITUS_LEDGER" ingest "$lines" --database-url "$url" >/dev/null || return 1
    if [ "$(citus_products "$worker")" != "$expected" ]; then
        echo "Citus: the products read on a worker after their declarations:" >&2
        citus_products "$worker" >&2
        return 1
    fi
    "$CITUS_LEDGER" rebuild --database-url "$url" | sed 's/^/  /' || return 1
    if [ "$(citus_reference_tables "$url")" != "$CITUS_REFERENCE_TABLES" ] || [ "$(citus_products "$worker")" != "$expected" ]; then
        echo "Citus: after the rebuild, reference tables '$(citus_reference_tables "$url")', products on a worker:" >&2
        citus_products "$worker" >&2
        return 1
    fi
    echo "  products declared and rebuilt, read on a worker: $(citus_products "$worker" | wc -l) rows"
}

# A worker killed (pg_ctl stop -m immediate) while commands that span the nodes run, one
# transaction per line: product declarations from three writers, each one a 2PC (the products
# are a reference table), and purchases from three more, each of a user of its own, whose keys
# live in registries on either worker (`scripts/dev citus kill-worker` runs it alone). Once the
# worker is started again, 25 s later, and Citus recovers the prepared transactions it holds, every
# declaration acknowledged is on every node, the three nodes hold the same products as
# the log declares, every purchase acknowledged is in the ledger once, no prepared transaction is
# left, `verify` passes (every payment with its registry rows: nothing half-applied), every
# transaction that used 2PC prepared every worker it wrote (citus_audit_2pc), and every writer
# rode out the restart: each of its lines acknowledged.
citus_check_worker_killed() {
    local name="ledger_citus_killed_$$" url worker=2 data pids=() w i ok=0 acked acknowledged declared recovered
    local writers="1 2 3 4 5 6" offset
    data="$CITUS_HOME/nodes/${CITUS_NODES[$worker]}"
    echo "  a worker killed in the middle of commands that write every node:"
    rm -f "$CITUS_HOME"/killed.*.out
    citus_create_database "$name"
    url=$(citus_conninfo 0 "$name")
    "$CITUS_LEDGER" migrate --database-url "$url" >/dev/null || ok=1
    offset=$(citus_log_offset)
    citus_audit_database "$name"
    for w in 1 2 3; do
        for i in $(seq 1 600); do
            printf '{"type":"product","storeCode":"GG","productId":"w%d-%d","productType":"CONSUMABLE"}\n' "$w" "$i"
        done | "$CITUS_LEDGER" ingest - --batch-size 1 --database-url "$url" >"$CITUS_HOME/killed.$w.out" 2>&1 &
        pids+=($!)
    done
    # Three more writers record 300 purchases each, every one of a user of its own: each claims
    # its paymentSeq, store transaction and token in registries that live on either worker, so
    # most of them are 2PC across the two workers.
    for w in $writers; do
        [ "$w" -le 3 ] && continue
        for i in $(seq 1 300); do
            printf '{"type":"purchase","userId":"k%d-%d","storeCode":"GG","productId":"gems","productType":"CONSUMABLE","price":"0.99","currency":"USD","paymentSeq":"kp%d-%d","purchaseToken":"tok-kp%d-%d","transactionId":"GPA.kp%d-%d","purchaseTime":"2026-11-05T00:00:00Z"}\n' "$w" "$i" "$w" "$i" "$w" "$i" "$w" "$i"
        done | "$CITUS_LEDGER" ingest - --batch-size 1 --database-url "$url" >"$CITUS_HOME/killed.$w.out" 2>&1 &
        pids+=($!)
    done
    # Killed once the writers are under way, and kept down 25 s before it starts again: longer
    # than 20 attempts' 19 s of retries after a lost connection (CommandRetry.maxAttemptsWhileLost).
    for i in $(seq 1 100); do
        [ "$(cat "$CITUS_HOME"/killed.*.out 2>/dev/null | grep -c '"status":"recorded"')" -ge 60 ] && break
        sleep 0.1
    done
    pg_run "$PG_BIN/pg_ctl" -D "$data" -m immediate stop >/dev/null
    sleep 25
    pg_run "$PG_BIN/pg_ctl" -D "$data" -l "$data.log" -w -t 120 start >/dev/null
    # Every writer rides out the restart: Citus reports the dead worker as a lost connection
    # (SQLSTATE 08006 when it cannot connect, XX000 "server closed the connection unexpectedly"
    # when the connection broke under a statement, 58030 "failed to COPY to shard" under a COPY),
    # and the library runs an idempotent command again after a pause.
    for w in $writers; do
        if ! wait "${pids[$((w - 1))]}"; then
            echo "Citus: writer $w stopped:" >&2
            grep '^ledger:' "$CITUS_HOME/killed.$w.out" >&2
            ok=1
        fi
    done
    # The writers met the dead worker rather than finishing first.
    if ! grep -Eq "SQLSTATE (08006|XX000)" "$CITUS_HOME"/killed.*.out; then
        echo "Citus: no writer met the killed worker; the check proved nothing" >&2
        ok=1
    fi
    recovered=$(psql "$url" -Atqc "SELECT recover_prepared_transactions()")
    # An acknowledged line: {"line":N,"status":"recorded"}, writer w's product wW-N.
    acked=$(for w in 1 2 3; do
                sed -n "s/^{\"line\":\([0-9]*\),\"status\":\"recorded\".*/w$w-\1/p" "$CITUS_HOME/killed.$w.out"
            done | sort)
    acknowledged=$(echo "$acked" | grep -c .)
    declared=$(psql "$url" -Atqc "SELECT data->>'productId' FROM ledger.events WHERE type = 'ProductDeclared' ORDER BY 1")
    for i in "${!CITUS_NODES[@]}"; do
        if [ "$(psql "$(citus_conninfo "$i" "$name")" -Atqc "SELECT product_id FROM ledger.products ORDER BY 1")" != "$declared" ]; then
            echo "Citus: the ${CITUS_NODES[$i]}'s products are not the ones the log declares" >&2
            ok=1
        fi
        if [ "$(psql "$(citus_conninfo "$i" "$name")" -Atqc "SELECT count(*) FROM pg_prepared_xacts")" != 0 ]; then
            echo "Citus: the ${CITUS_NODES[$i]} still holds prepared transactions after the recovery" >&2
            ok=1
        fi
    done
    if [ "$acknowledged" != 1800 ]; then
        echo "Citus: $acknowledged of 1800 declarations acknowledged" >&2
        ok=1
    fi
    if [ -n "$(comm -23 <(echo "$acked") <(echo "$declared" | sort))" ]; then
        echo "Citus: acknowledged declarations missing after the recovery:" >&2
        comm -23 <(echo "$acked") <(echo "$declared" | sort) | head >&2
        ok=1
    fi
    # Every purchase acknowledged (recorded, or a duplicate when its first attempt had committed
    # before the connection broke) is there once; verify then finds every registry row with its
    # payment and every payment with its rows: nothing half-applied.
    local bought paid purchases=900
    bought=$(for w in $writers; do
                 [ "$w" -le 3 ] && continue
                 sed -n "s/^{\"line\":\([0-9]*\),\"status\":\"\(recorded\|duplicate\)\".*/kp$w-\1/p" "$CITUS_HOME/killed.$w.out"
             done | sort)
    paid=$(psql "$url" -Atqc "SELECT payment_seq FROM ledger.payments WHERE payment_seq LIKE 'kp%' ORDER BY 1")
    if [ "$(echo "$bought" | grep -c .)" != $purchases ] || [ "$bought" != "$(echo "$paid" | sort)" ]; then
        echo "Citus: $(echo "$bought" | grep -c .) of $purchases purchases acknowledged, $(echo "$paid" | grep -c .) in the ledger" >&2
        ok=1
    fi
    citus_verify_passes "$url" "the recovery" || ok=1
    citus_audit_2pc "$offset" "the writers under the kill" || ok=1
    echo "  $acknowledged declarations acknowledged, $(echo "$declared" | grep -c .) in the log," \
         "the same on every node; $purchases purchases acknowledged and recorded once;" \
         "$(cat "$CITUS_HOME"/killed.*.out | grep -c 'lost: reconnecting') commands run again;" \
         "$recovered prepared transaction(s) recovered; verify and verify --chain passed"
    citus_drop_database "$name"
    return $ok
}

# What the moved-ledger check compares, for the database at conninfo $1.
citus_answers() {
    "$CITUS_LEDGER" unconsumed --user user-00007 --json --database-url "$1" &&
        "$CITUS_LEDGER" subscriptions --user user-00003 --json --database-url "$1" &&
        "$CITUS_LEDGER" analytics revenue --from 2026-01-01 --to 2026-12-31 --by month --database-url "$1" &&
        "$CITUS_LEDGER" analytics churn --from 2026-01-01 --to 2026-12-01 --by month --database-url "$1" &&
        "$CITUS_LEDGER" keys list --database-url "$1" | cut -c1-40
}

# A ledger of one server moved onto Citus: made on the coordinator before the extension, then
# the extension and the workers, then `ledger migrate` again, which distributes its tables with
# their rows; it answers as before, and verify passes.
citus_check_moved_ledger() {
    local moved="ledger_citus_moved_$$" url placed before after ok=0
    echo "  a single-node ledger moved onto the cluster:"
    psql "$(citus_conninfo 0 postgres)" -qc "CREATE DATABASE \"$moved\"" >/dev/null
    url=$(citus_conninfo 0 "$moved")
    if "$CITUS_LEDGER" migrate --database-url "$url" >/dev/null &&
        "$CITUS_LEDGER" demo --users 50 --database-url "$url" >/dev/null &&
        "$CITUS_LEDGER" keys add --role writer --database-url "$url" >/dev/null &&
        before=$(citus_answers "$url") && citus_create_database "$moved" &&
        "$CITUS_LEDGER" migrate --database-url "$url" | sed 's/^/  /' &&
        after=$(citus_answers "$url") &&
        "$CITUS_LEDGER" verify --database-url "$url" | sed 's/^/  /'; then
        if ! citus_check_placed "$url" || [ "$before" != "$after" ] || [ -z "$before" ]; then
            echo "Citus: the moved ledger is not placed by the plan, or answers otherwise:" >&2
            diff <(echo "$before") <(echo "$after") >&2
            ok=1
        else
            echo "  the same answers before and after ($(echo "$before" | wc -l) lines: unconsumed, subscriptions, revenue, churn, keys)"
        fi
    else
        ok=1
    fi
    citus_drop_database "$moved"
    return $ok
}

# `ledger migrate` on a new database distributes every table of ledger.distribution_plan: Citus
# accepts every key of the user-owned tables and of the registries, and ledger.append appends to
# a stream of the distributed log, on the owner's worker.
citus_check_distribution_plan() {
    local name="ledger_citus_plan_$$" url version ok=0
    echo "  every table distributed by the plan (ledger.distribution_plan), by ledger migrate:"
    citus_create_database "$name"
    url=$(citus_conninfo 0 "$name")
    if "$CITUS_LEDGER" migrate --database-url "$url" >/dev/null &&
        citus_check_placed "$url" &&
        psql "$url" -Atq -v ON_ERROR_STOP=1 \
            -c "SELECT ledger.append('payment:plan-1', 'PurchaseRecorded', '{\"userId\": \"u-plan\", \"paymentSeq\": \"plan-1\"}', now())" \
            -c "SELECT ledger.append('payment:plan-1', 'PaymentConsumed', '{\"userId\": \"u-plan\", \"paymentSeq\": \"plan-1\"}', now())" \
            >/dev/null &&
        version=$(psql "$url" -Atqc "
            SELECT s.version || CASE WHEN p.groupid <> 0 THEN ' on a worker' ELSE ' on the coordinator' END
              FROM ledger.streams s, pg_dist_placement p
             WHERE s.user_id = 'u-plan' AND s.stream = 'payment:plan-1'
               AND p.shardid = get_shard_id_for_distribution_column('ledger.streams', 'u-plan')"); then
        if [ "$version" != "2 on a worker" ]; then
            echo "Citus: the stream at version '$version' (expected 2 on a worker)" >&2
            ok=1
        else
            echo "  $(psql "$url" -Atqc "SELECT count(*) FROM pg_dist_partition WHERE partmethod = 'h'") tables distributed," \
                 "a stream appended to twice on its owner's worker (ledger.append)"
        fi
    else
        echo "Citus: the distribution plan was refused (above)" >&2
        ok=1
    fi
    citus_drop_database "$name"
    return $ok
}

# Appends the events a query ($2, in the database at conninfo $1) gives as rows of stream, type,
# data, time and owner, in its order, to the ledger at conninfo $3, each appended and projected
# in a transaction of its own, as a command does it.
citus_append_projected() {
    psql "$1" -Atq -v ON_ERROR_STOP=1 -c "
        SELECT format('SELECT ledger.project_positions(ARRAY[ledger.append(%L, %L, %L::jsonb, %L::timestamptz, NULL, %L)], %L);',
                      e.stream, e.type, e.data, e.at, e.owner, e.owner)
          FROM ($2) AS e (stream, type, data, at, owner)" >"$CITUS_HOME/appended.sql" &&
        psql "$3" -Atq -v ON_ERROR_STOP=1 -f "$CITUS_HOME/appended.sql" >/dev/null
}

# The rows of table $3 of the ledger at conninfo $1 as JSON ($2), sorted; with $4 a file of
# "position|stream#version" lines (the ledger's events, read once a ledger), each "…position"
# field's number replaced by the event at that position.
citus_ledger_rows() {
    if [ -n "${4:-}" ]; then
        psql "$1" -Atqc "SELECT ($2)::text FROM ledger.$3 t" | python3 -c '
import json, sys
events = dict(line.rstrip("\n").split("|", 1) for line in open(sys.argv[1]))
out = []
for line in sys.stdin:
    r = json.loads(line)
    for k, v in r.items():
        if k.endswith("position") and isinstance(v, int):
            r[k] = events.get(str(v), f"no event at {v}")
    out.append(json.dumps(r, sort_keys=True))
print("\n".join(sorted(out)))
' "$4"
    else
        psql "$1" -Atqc "SELECT ($2)::text FROM ledger.$3 t ORDER BY 1"
    fi
}

# Every projection table and registry of two ledgers (one server's tables, then a distributed
# one) holds the same rows, the time each payment was recorded aside; with $3 = "without
# positions", the positions in the log of the events that wrote them aside too (a set appends its
# events round by round on one server, in input order on the cluster: the same events, in
# another order, which the caller compares by stream and version). Otherwise each position is
# compared as the event it names (its stream and version): the same events have other positions
# on the cluster, each taken on its owner's worker (ledger.event_on_owner_node).
CITUS_COMPARED_TABLES="payments lineages auto_renew_changes entitled_spans lineage_states restores billing_states notifications
    products account_links payment_aliases payment_keys transaction_keys lineage_keys token_keys notification_keys"
citus_compare_ledgers() {
    local t ok=0 row="to_jsonb(t) - 'recorded_at'" events1="" events2=""
    if [ "${3:-}" = "without positions" ]; then
        row="$row - '$(psql "$1" -Atqc "SELECT array_agg(DISTINCT column_name::text) FROM information_schema.columns
                                         WHERE table_schema = 'ledger' AND column_name LIKE '%position'")'::text[]"
    else
        events1="$CITUS_HOME/events1.map" events2="$CITUS_HOME/events2.map"
        psql "$1" -Atqc "SELECT position || '|' || stream || '#' || version FROM ledger.events" >"$events1" || return 1
        psql "$2" -Atqc "SELECT position || '|' || stream || '#' || version FROM ledger.events" >"$events2" || return 1
    fi
    for t in $CITUS_COMPARED_TABLES; do
        if ! diff <(citus_ledger_rows "$1" "$row" "$t" "$events1") \
                  <(citus_ledger_rows "$2" "$row" "$t" "$events2") >"$CITUS_HOME/projection.diff"; then
            echo "Citus: ledger.$t differs between one server and the distributed ledger (< one server, > distributed):" >&2
            head -6 "$CITUS_HOME/projection.diff" >&2
            ok=1
        fi
    done
    return $ok
}

# The projection on a distributed ledger: a ledger of one server's tables (a database of the
# coordinator without the extension) gets a demo and scripts/citus/more-events.sql, every kind of
# event; a ledger distributed by `ledger migrate` gets the same log
# appended and projected one event per transaction, as the commands do it: every projection
# table and registry holds the same rows in both (citus_compare_ledgers).
citus_check_distributed_projection() {
    local source="ledger_citus_source_$$" target="ledger_citus_target_$$" from to ok=0 mode
    echo "  the projection on a distributed ledger, against one server's:"
    citus_create_plain_database "$source"
    citus_create_database "$target"
    from=$(citus_conninfo 0 "$source")
    to=$(citus_conninfo 0 "$target")
    if "$CITUS_LEDGER" migrate --database-url "$from" >/dev/null &&
        "$CITUS_LEDGER" demo --users 50 --database-url "$from" >/dev/null &&
        citus_append_projected "$from" "$(cat "$ROOT/scripts/citus/more-events.sql")" "$from" &&
        "$CITUS_LEDGER" migrate --database-url "$to" >/dev/null &&
        citus_append_projected "$from" "SELECT stream, type, data, occurred_at, user_id FROM ledger.events ORDER BY position" "$to"; then
        mode=$(psql "$to" -Atqc "SELECT array_to_string(proconfig, ' ') FROM pg_proc WHERE oid = 'ledger.project_positions(bigint[], text)'::regprocedure")
        case "$mode" in
            *plan_cache_mode=force_custom_plan*) ;;
            *) echo "Citus: project_positions on the distributed log runs with '$mode'" >&2; ok=1 ;;
        esac
        citus_compare_ledgers "$from" "$to" || ok=1
        [ $ok -eq 0 ] &&
            echo "  $(psql "$to" -Atqc "SELECT count(*) || ' events of ' || count(DISTINCT type) || ' kinds' FROM ledger.events")," \
                 "projected one at a time on the distributed ledger: its $(echo $CITUS_COMPARED_TABLES | wc -w) tables hold the same rows"
    else
        echo "Citus: the log could not be projected on the distributed ledger (above)" >&2
        ok=1
    fi
    citus_drop_database "$source"
    citus_drop_database "$target"
    return $ok
}

# What every user of two ledgers (one server's tables, then a distributed one, given the same
# commands from $3 on, an ISO time) is told by the queries of `ledger`: unconsumed payments,
# subscriptions now and at two past instants, expired ones included, and the history; payments
# looked up by name and by store transaction (their recording times aside); then the
# reports over every user (revenue, subscribers, refunds and churn by day and by month, with and without
# sandbox payments, the backlog at two instants) and the subscriptions' statuses the summary
# counts (`ledger.subscriptions_at`). A history's positions and recording times aside (a set
# appends its events round by round on one server), the times of events the commands stamped with
# the wall clock (since $3: an account link, a link of a learned payment), which differ between
# the ledgers, and its events of one instant in any order; everything else alike, line for line.
citus_compare_queries() {
    local url i user at
    local normalize='import json, sys
since = sys.argv[1]
for line in sys.stdin:
    d = json.loads(line)
    if isinstance(d, dict): d.pop("recordedAt", None)
    if isinstance(d, dict) and "entries" in d:
        for e in d["entries"]:
            e.pop("position", None); e.pop("recordedAt", None)
            if e["occurredAt"] >= since: e["occurredAt"] = "(the wall clock)"
        d["entries"].sort(key=lambda e: (e["occurredAt"], json.dumps(e, sort_keys=True)))
    print(json.dumps(d, sort_keys=True))'
    i=0
    for url in "$1" "$2"; do
        i=$((i + 1))
        for user in $(psql "$1" -Atqc "SELECT DISTINCT user_id FROM ledger.events WHERE user_id <> '' ORDER BY 1") u-nobody; do
            "$CITUS_LEDGER" unconsumed --user "$user" --json --database-url "$url" || return 1
            for at in '' 2026-06-01T00:00:00Z 2026-12-02T12:00:00Z; do   # '': now
                "$CITUS_LEDGER" subscriptions --user "$user" --include-expired ${at:+--at "$at"} --json \
                    --database-url "$url" || return 1
            done
            "$CITUS_LEDGER" history --user "$user" --limit 1000 --json --database-url "$url" || return 1
        done | python3 -c "$normalize" "$3" >"$CITUS_HOME/queries.$i" &&
            # Payments looked up by 30 names (aliases among them), 30 store transactions and an
            # unknown name, each through its registry (exit 1: not found).
            for key in $(psql "$1" -Atqc "SELECT payment_seq FROM ledger.payment_keys ORDER BY md5(payment_seq) LIMIT 30") no-such-payment; do
                "$CITUS_LEDGER" lookup --payment-seq "$key" --json --database-url "$url" 2>/dev/null || echo "\"lookup $key: exit $?\""
            done | python3 -c "$normalize" "$3" >>"$CITUS_HOME/queries.$i" &&
            for key in $(psql "$1" -Atqc "SELECT store_code || ':' || transaction_id FROM ledger.transaction_keys ORDER BY md5(transaction_id) LIMIT 30"); do
                "$CITUS_LEDGER" lookup --store "${key%%:*}" --transaction-id "${key#*:}" --json --database-url "$url" || return 1
            done | python3 -c "$normalize" "$3" >>"$CITUS_HOME/queries.$i" &&
            for report in revenue subscribers refunds churn; do
                for by in day month; do
                    "$CITUS_LEDGER" analytics "$report" --from 2025-12-01 --to 2027-02-01 --by "$by" --json --database-url "$url" || return 1
                    "$CITUS_LEDGER" analytics "$report" --from 2025-12-01 --to 2027-02-01 --by "$by" --include-sandbox --json --database-url "$url" || return 1
                done
            done >>"$CITUS_HOME/queries.$i" &&
            for at in 2026-06-01T00:00:00Z 2026-12-05T00:00:00Z; do
                "$CITUS_LEDGER" analytics backlog --at "$at" --json --database-url "$url" || return 1
                psql "$url" -Atqc "SELECT status, count(*) FROM ledger.subscriptions_at('$at') GROUP BY 1 ORDER BY 1" || return 1
            done >>"$CITUS_HOME/queries.$i" ||
            { echo "Citus: the queries failed on $([ $i -eq 1 ] && echo "one server's tables" || echo "the distributed ledger")" >&2; return 1; }
    done
    if ! diff "$CITUS_HOME/queries.1" "$CITUS_HOME/queries.2" >"$CITUS_HOME/queries.diff"; then
        echo "Citus: the queries answered otherwise on the distributed ledger (< one server, > distributed):" >&2
        head -c 2000 "$CITUS_HOME/queries.diff" >&2
        return 1
    fi
}

# The commands on a distributed ledger: the same commands on a ledger of one server's tables and
# on one distributed by the whole plan: a demo's lines through `ledger ingest` in its batches
# (purchases, renewals, consumes, cancels, refunds, restores: on one server a batch's payments and
# consumes run as sets, on the cluster one at a time), then through the SQL entry points, one
# statement per transaction, scripts/citus/more-commands.sql (store notifications of every effect,
# an account link, the refusals the key registries decide) and scripts/citus/more-sets.sql (sets
# of payments and of consumes of several owners, restores). Both answer every command alike,
# append the same events, hold the same rows (citus_compare_ledgers) and answer every user's
# queries alike (citus_compare_queries). Before the commands, `ledger migrate` runs again on the
# distributed ledger, as a release that changes the commands would.
citus_check_distributed_commands() {
    local source="ledger_citus_commands_$$" target="ledger_citus_commands_d_$$" from to ok=0 url i since offset
    local demo="$CITUS_HOME/commands.ndjson"
    echo "  the commands on a distributed ledger, against one server's:"
    citus_create_plain_database "$source"
    citus_create_database "$target"
    from=$(citus_conninfo 0 "$source")
    to=$(citus_conninfo 0 "$target")
    "$CITUS_LEDGER" demo --users 50 --write - 2>/dev/null >"$demo"
    # The distributed ledger then takes a release that changes the commands: `ledger migrate`
    # applies every definition again there (the projections' are the same: nothing is rebuilt).
    if "$CITUS_LEDGER" migrate --database-url "$from" >/dev/null &&
        "$CITUS_LEDGER" migrate --database-url "$to" >/dev/null &&
        psql "$to" -Atqc "DELETE FROM ledger.schema_definitions WHERE path NOT LIKE 'projections/%'" &&
        "$CITUS_LEDGER" migrate --database-url "$to" >/dev/null; then
        # Every command Citus sends a worker from here on goes to the 2PC audit at the end.
        offset=$(citus_log_offset)
        citus_audit_database "$target"
        i=0
        since=$(date -u +%Y-%m-%dT%H:%M:%S)
        for url in "$from" "$to"; do
            i=$((i + 1))
            # Exit 1: the demo refuses some lines on purpose (the contract's refusals). Its lines
            # go in the ingest's batches (200 lines a transaction), so they run as sets.
            { "$CITUS_LEDGER" ingest "$demo" --database-url "$url" || [ $? -eq 1 ]; } >"$CITUS_HOME/answers.$i" &&
                psql "$url" -X -Atq -v ON_ERROR_STOP=1 -f "$ROOT/scripts/citus/more-commands.sql" >>"$CITUS_HOME/answers.$i" &&
                psql "$url" -X -Atq -v ON_ERROR_STOP=1 -f "$ROOT/scripts/citus/more-sets.sql" >>"$CITUS_HOME/answers.$i" &&
                psql "$url" -Atqc "SELECT stream, version, user_id, type, data - '{purchaseTokenClaimed,lineageClaimed}'::text[] FROM ledger.events ORDER BY stream, version" >"$CITUS_HOME/events.$i" ||
                { echo "Citus: the commands failed on $([ $i -eq 1 ] && echo "one server's tables" || echo "the distributed ledger")" >&2; ok=1; }
        done
        if [ $ok -eq 0 ]; then
            diff "$CITUS_HOME/answers.1" "$CITUS_HOME/answers.2" >&2 ||
                { echo "Citus: the commands answered otherwise on the distributed ledger (< one server, > distributed)" >&2; ok=1; }
            # The same events, but for the marks a cluster's payment carries when its Google token
            # is another payment's already (ledger.payment_token_claim) or its lineage is begun
            # (ledger.apply_payment), which one server leaves out (its order of positions says
            # the same): as many marks as one server's payments that do not hold their token, and
            # as many as its subscription payments that are not their lineage's first.
            diff -q "$CITUS_HOME/events.1" "$CITUS_HOME/events.2" >&2 ||
                { echo "Citus: the distributed ledger appended other events" >&2; ok=1; }
            local marks held
            marks=$(psql "$to" -Atqc "SELECT count(*) FROM ledger.events WHERE data ? 'purchaseTokenClaimed'")
            held=$(psql "$from" -Atqc "SELECT count(*) FROM ledger.payments p WHERE p.store_code = 'GG' AND p.token_sha256 IS NOT NULL
                                          AND NOT EXISTS (SELECT FROM ledger.token_keys k WHERE k.token_sha256 = p.token_sha256
                                                             AND k.user_id = p.user_id AND k.position = p.recorded_position)")
            [ "$marks" = "$held" ] ||
                { echo "Citus: $marks payments marked as not taking their token on the distributed ledger, $held on one server" >&2; ok=1; }
            local joined later
            joined=$(psql "$to" -Atqc "SELECT count(*) FROM ledger.events WHERE data ? 'lineageClaimed'")
            later=$(psql "$from" -Atqc "SELECT count(*) FROM ledger.payments p WHERE p.product_type <> 'CONSUMABLE'
                                           AND NOT EXISTS (SELECT FROM ledger.lineages l WHERE l.store_code = p.store_code
                                                              AND l.original_transaction_id = p.lineage_id AND l.user_id = p.user_id
                                                              AND l.first_position = p.recorded_position)")
            [ "$joined" = "$later" ] ||
                { echo "Citus: $joined payments marked as joining their lineage on the distributed ledger, $later on one server" >&2; ok=1; }
            citus_compare_ledgers "$from" "$to" "without positions" || ok=1
            citus_compare_queries "$from" "$to" "$since" || ok=1
        fi
        [ $ok -eq 0 ] &&
            echo "  $(wc -l <"$CITUS_HOME/answers.2") commands answered alike, in batches and sets, on the distributed ledger:" \
                 "$(wc -l <"$CITUS_HOME/events.2") events ($marks marked as not taking their Google token, $joined as joining their lineage) and its $(echo $CITUS_COMPARED_TABLES | wc -w) tables the same," \
                 "and $(wc -l <"$CITUS_HOME/queries.2") lines of queries (every user's unconsumed, subscriptions and history; 61 lookups; reports)"
        [ $ok -eq 0 ] && { citus_check_distributed_rebuild "$from" "$to" || ok=1; }
        [ $ok -eq 0 ] && { citus_check_distributed_verify "$target" || ok=1; }
        citus_audit_2pc "$offset" "the commands, the rebuild and verify" || ok=1
    else
        echo "Citus: the distributed ledger could not be made (above)" >&2
        ok=1
    fi
    citus_drop_database "$source"
    citus_drop_database "$target"
    return $ok
}

# A release whose projections change, on the distributed ledger at conninfo $2, while commands
# arrive: `ledger migrate` applies every definition again and rebuilds the projections (a replay
# into distributed shadow tables, their indexes built after it, the swap) while `ledger ingest`
# writes more lines one per transaction. The same lines go into the ledger of one server's tables
# at conninfo $1; then both hold the same rows, and `verify` passes on the distributed one.
citus_check_distributed_rebuild() {
    local more="$CITUS_HOME/rebuild.ndjson" writer status ok=0
    "$CITUS_LEDGER" demo --write "$more" --events 1000 --seed 11 >/dev/null 2>&1 || return 1
    # Exit 1: some demo lines are refused on purpose (the contract's refusals).
    "$CITUS_LEDGER" ingest "$more" --database-url "$1" >/dev/null
    [ $? -le 1 ] || { echo "Citus: the lines for the rebuild failed on one server's tables" >&2; return 1; }
    psql "$2" -Atqc "DELETE FROM ledger.schema_definitions" || return 1
    { "$CITUS_LEDGER" ingest "$more" --batch-size 1 --database-url "$2" >/dev/null 2>"$CITUS_HOME/rebuild.ingest"
      echo $? >"$CITUS_HOME/rebuild.status"; } &
    writer=$!
    sleep 0.5
    "$CITUS_LEDGER" migrate --database-url "$2" >"$CITUS_HOME/rebuild.migrate" 2>&1 || ok=1
    # The writer must outlast the migration, or the rebuild ran under no writes.
    kill -0 "$writer" 2>/dev/null || { echo "Citus: the writer ended before the migration's rebuild did" >&2; ok=1; }
    wait "$writer"
    status=$(cat "$CITUS_HOME/rebuild.status")
    if [ $ok -ne 0 ] || [ "$status" -gt 1 ] || ! grep -q 'rebuilt' "$CITUS_HOME/rebuild.migrate"; then
        echo "Citus: the migration's rebuild under writes on the distributed ledger (ingest exit $status):" >&2
        cat "$CITUS_HOME/rebuild.migrate" "$CITUS_HOME/rebuild.ingest" >&2
        return 1
    fi
    citus_compare_ledgers "$1" "$2" "without positions" || return 1
    "$CITUS_LEDGER" verify --database-url "$2" >"$CITUS_HOME/rebuild.out" 2>&1 || {
        echo "Citus: verify after the rebuild on the distributed ledger:" >&2
        cat "$CITUS_HOME/rebuild.out" >&2
        return 1
    }
    echo "  the projections rebuilt by \`ledger migrate\` on the distributed ledger while $(wc -l <"$more") more lines were written" \
         "(the rebuild replayed $(grep -o 'rebuilt the projections ([0-9]*' "$CITUS_HOME/rebuild.migrate" | grep -o '[0-9]*$') events): the same rows as one server's, and verify passes"
}

# `ledger verify` and `verify --chain` on the distributed ledger in database $1: both pass; then,
# behind the ledger's back on a worker (the shard's triggers disabled, as a superuser could), one
# payment's price is changed, one event's data altered and a stream's head copied to another
# owner. `verify` names the payment and `verify --chain` the altered event and both heads of the
# forked stream, each read from the shards of every worker.
citus_shard_on_worker() { # database, table, user: the shard's name and the index of its worker
    local url shard port
    url=$(citus_conninfo 0 "$1")
    read -r shard port <<<"$(psql "$url" -AtqF ' ' -c "
        SELECT s.shardid, n.nodeport FROM pg_dist_placement p JOIN pg_dist_node n USING (groupid)
          JOIN pg_dist_shard s USING (shardid)
         WHERE s.shardid = get_shard_id_for_distribution_column('$2', '$3')")"
    echo "${2}_$shard $((port - $(citus_port 0)))"
}
citus_check_distributed_verify() {
    local url payment owner event stream other table worker wurl ok=0
    url=$(citus_conninfo 0 "$1")
    citus_verify_passes "$url" "the commands" || return 1
    read -r payment owner <<<"$(psql "$url" -AtqF ' ' -c "SELECT payment_seq, user_id FROM ledger.payments WHERE price IS NOT NULL ORDER BY payment_seq LIMIT 1")"
    read -r event stream <<<"$(psql "$url" -AtqF ' ' -c "SELECT position, stream FROM ledger.events WHERE user_id = '$owner' AND stream = 'payment:$payment'")"
    other=$(psql "$url" -Atqc "SELECT stream FROM ledger.streams WHERE user_id <> '$owner' AND user_id <> '' ORDER BY stream LIMIT 1")
    read -r table worker <<<"$(citus_shard_on_worker "$1" ledger.payments "$owner")"
    wurl=$(citus_conninfo "$worker" "$1")
    psql "$wurl" -Atq -v ON_ERROR_STOP=1 -c "UPDATE $table SET price = price + 1 WHERE payment_seq = '$payment'" || ok=1
    read -r table worker <<<"$(citus_shard_on_worker "$1" ledger.events "$owner")"
    psql "$(citus_conninfo "$worker" "$1")" -Atq -v ON_ERROR_STOP=1 -c "BEGIN" -c "ALTER TABLE $table DISABLE TRIGGER USER" \
        -c "UPDATE $table SET data = data || '{\"tampered\": true}' WHERE position = $event" \
        -c "ALTER TABLE $table ENABLE TRIGGER USER" -c "COMMIT" || ok=1
    psql "$url" -Atq -v ON_ERROR_STOP=1 -c "INSERT INTO ledger.streams (user_id, stream, version, head_hash)
        SELECT '$owner', stream, version, head_hash FROM ledger.streams WHERE stream = '$other'" || ok=1
    "$CITUS_LEDGER" verify --database-url "$url" >"$CITUS_HOME/verify.out" 2>&1
    [ $? -eq 1 ] && grep -q "payment $payment *price" "$CITUS_HOME/verify.out" &&
        [ "$(grep -c '^payments ' "$CITUS_HOME/verify.out")" = 1 ] || {
        echo "Citus: verify did not name the one payment changed on a worker ($payment):" >&2
        cat "$CITUS_HOME/verify.out" >&2
        ok=1
    }
    "$CITUS_LEDGER" verify --chain --json --database-url "$url" >"$CITUS_HOME/verify.out" 2>&1
    [ $? -eq 1 ] && python3 -c 'import json, sys
breaks = json.load(open(sys.argv[1]))
altered = [(b.get("position"), b["stream"]) for b in breaks if b["problem"] == "altered"]
forked = [b["stream"] for b in breaks if b["problem"] == "forked"]
sys.exit(0 if altered == [(int(sys.argv[2]), sys.argv[3])] and forked == [sys.argv[4]] * 2 and len(breaks) == 3 else 1)' \
        "$CITUS_HOME/verify.out" "$event" "$stream" "$other" || {
        echo "Citus: verify --chain did not name the altered event ($event) and the forked stream ($other) alone:" >&2
        cat "$CITUS_HOME/verify.out" >&2
        ok=1
    }
    [ $ok -eq 0 ] && echo "  verify and verify --chain pass on the distributed ledger, and name a payment changed on a worker, an event altered there and a stream forked across owners"
    return $ok
}

# A user id with prefix $2 whose shards live on worker $3 (1 or 2), in the database at conninfo $1.
citus_user_on_worker() {
    psql "$1" -Atqc "
        SELECT u FROM generate_series(1, 200) i, LATERAL (SELECT '$2' || i AS u) x
          JOIN pg_dist_placement p ON p.shardid = get_shard_id_for_distribution_column('ledger.events', x.u)
          JOIN pg_dist_node n ON n.groupid = p.groupid
         WHERE n.nodeport = $(citus_port "$3") ORDER BY i LIMIT 1"
}

# Races across shards on a distributed ledger, each with exactly one winner and nothing lost or
# doubled: 32 processes consuming each of 10 payments at once (one `consumed` each); two users on
# different workers recording the same 20 paymentSeqs at once, and the same 20 store
# transactions under paymentSeqs of their own (each recorded once, by one of them, its registry
# row naming that user); and 30 store notifications, each arriving at once with the SDK line of
# its transaction, the notification's parked home ('') on the other worker than the user's (each
# payment recorded once, each notification the user's and not parked). Then `verify` and
# `verify --chain` pass.
citus_check_races() {
    local name="ledger_citus_races_$$" url ua ub i p ok=0 lines="$CITUS_HOME/races"
    echo "  races across shards on a distributed ledger:"
    citus_create_database "$name"
    url=$(citus_conninfo 0 "$name")
    mkdir -p "$lines" && rm -f "$lines"/*
    "$CITUS_LEDGER" migrate --database-url "$url" >/dev/null || { citus_drop_database "$name"; return 1; }
    # Every command Citus sends a worker from here on goes to the coordinator's log, for the 2PC
    # audit at the end.
    local offset
    offset=$(citus_log_offset)
    citus_audit_database "$name"
    ua=$(citus_user_on_worker "$url" race-a- 1)
    ub=$(citus_user_on_worker "$url" race-b- 2)
    # 32 consumes of each of 10 payments.
    for p in $(seq 1 10); do
        printf '{"type":"purchase","userId":"%s","storeCode":"GG","productId":"gems","productType":"CONSUMABLE","price":"0.99","currency":"USD","paymentSeq":"rc-%s","purchaseToken":"tok-rc-%s","transactionId":"GPA.rc-%s","purchaseTime":"2026-11-01T00:00:00Z"}\n' "$ua" "$p" "$p" "$p"
    done >"$lines/purchases.ndjson"
    for p in $(seq 1 10); do
        printf '{"type":"consume","userId":"%s","paymentSeq":"rc-%s","purchaseToken":"tok-rc-%s"}\n' "$ua" "$p" "$p"
    done >"$lines/consumes.ndjson"
    "$CITUS_LEDGER" ingest "$lines/purchases.ndjson" --database-url "$url" >/dev/null || ok=1
    for i in $(seq 1 32); do
        "$CITUS_LEDGER" ingest "$lines/consumes.ndjson" --batch-size 1 --database-url "$url" >"$lines/consumed.$i" 2>&1 &
    done
    # Two users, on different workers, each recording 20 paymentSeqs and 20 store transactions
    # the other records too, two processes each.
    for u in "$ua" "$ub"; do
        for p in $(seq 1 20); do
            printf '{"type":"purchase","userId":"%s","storeCode":"GG","productId":"gems","productType":"CONSUMABLE","price":"0.99","currency":"USD","paymentSeq":"rs-%s","purchaseToken":"tok-rs-%s","transactionId":"GPA.rs-%s","purchaseTime":"2026-11-02T00:00:00Z"}\n' "$u" "$p" "$p" "$p"
            printf '{"type":"purchase","userId":"%s","storeCode":"GG","productId":"gems","productType":"CONSUMABLE","price":"0.99","currency":"USD","paymentSeq":"rt-%s-%s","purchaseToken":"tok-rt-%s","transactionId":"GPA.rt-%s","purchaseTime":"2026-11-03T00:00:00Z"}\n' "$u" "$u" "$p" "$p" "$p"
        done >"$lines/claims.$u.ndjson"
        for i in 1 2; do
            "$CITUS_LEDGER" ingest "$lines/claims.$u.ndjson" --batch-size 1 --database-url "$url" >"$lines/claimed.$u.$i" 2>&1 &
        done
    done
    # 30 notifications, each with its transaction's SDK line, at once. A parked notification is
    # owned by '', on the shard of '': the notifications' user lives on the other worker.
    local owner home
    read -r _ home <<<"$(citus_shard_on_worker "$name" ledger.events '')"
    owner=$(citus_user_on_worker "$url" race-n- $((3 - home)))
    for p in $(seq 1 30); do
        printf "SELECT * FROM ledger.notify('{\"storeCode\":\"AS\",\"notificationId\":\"rn-%s\",\"notificationType\":\"ONE_TIME_CHARGE\",\"effect\":\"payment\",\"effectiveAt\":\"2026-11-04T00:00:00Z\",\"transactionId\":\"rn-tx-%s\",\"storeProductType\":\"consumable\",\"payment\":{\"storeCode\":\"AS\",\"productId\":\"gem_100\",\"price\":\"0.99\",\"currency\":\"USD\",\"transactionId\":\"rn-tx-%s\",\"purchaseTime\":\"2026-11-04T00:00:00Z\",\"sandboxPayment\":false,\"promotionPayment\":false},\"received\":{}}');\n" "$p" "$p" "$p" >"$lines/notify.$p.sql"
        printf "SELECT * FROM ledger.record_payment('purchase', '{\"userId\":\"%s\",\"storeCode\":\"AS\",\"productId\":\"gem_100\",\"productType\":\"CONSUMABLE\",\"price\":\"0.99\",\"currency\":\"USD\",\"paymentSeq\":\"rn-%s\",\"transactionId\":\"rn-tx-%s\",\"purchaseTime\":\"2026-11-04T00:00:00Z\",\"sandboxPayment\":false,\"promotionPayment\":false,\"purchaseTokenSha256\":\"%064x\"}');\n" "$owner" "$p" "$p" "$p" >"$lines/sdk.$p.sql"
        psql "$url" -X -Atq -v ON_ERROR_STOP=1 -f "$lines/notify.$p.sql" >"$lines/notified.$p" 2>&1 &
        psql "$url" -X -Atq -v ON_ERROR_STOP=1 -f "$lines/sdk.$p.sql" >"$lines/recorded.$p" 2>&1 &
    done
    wait
    local consumed already claims conflicts payments registry notified parked
    consumed=$(cat "$lines"/consumed.* | grep -c '"status":"consumed"')
    already=$(cat "$lines"/consumed.* | grep -c '"status":"alreadyConsumed"')
    if [ "$consumed" != 10 ] || [ "$already" != 310 ] ||
        [ "$(psql "$url" -Atqc "SELECT count(*) FROM ledger.payments WHERE payment_seq LIKE 'rc-%' AND consumed_at IS NOT NULL")" != 10 ] ||
        [ "$(psql "$url" -Atqc "SELECT count(*) FROM ledger.events WHERE type = 'PaymentConsumed'")" != 10 ]; then
        echo "Citus: 32 processes consuming 10 payments: $consumed consumed, $already already consumed (expected 10 and 310)" >&2
        ok=1
    fi
    claims=$(cat "$lines"/claimed.* | grep -c '"status":"recorded"')
    conflicts=$(cat "$lines"/claimed.* | grep -Ec '"code":"(USER_INVALID|PAYMENT_CONFLICT)"')
    payments=$(psql "$url" -Atqc "SELECT count(*) || ' ' || count(DISTINCT transaction_id) FROM ledger.payments WHERE payment_seq LIKE 'rs-%' OR payment_seq LIKE 'rt-%'")
    # A join by the registries' keys, not the owner: Citus repartitions it, when asked.
    registry=$(psql "$url" -Atq -c "SET citus.enable_repartition_joins = on" -c "
        SELECT count(*) FROM ledger.payments p
          JOIN ledger.payment_keys k ON k.payment_seq = p.payment_seq AND k.user_id = p.user_id
          JOIN ledger.transaction_keys t ON t.store_code = p.store_code AND t.transaction_id = p.transaction_id AND t.user_id = p.user_id
         WHERE p.payment_seq LIKE 'rs-%' OR p.payment_seq LIKE 'rt-%'")
    if [ "$claims" != 40 ] || [ "$payments" != "40 40" ] || [ "$registry" != 40 ] ||
        [ "$(cat "$lines"/claimed.* | grep -c '"status":"duplicate"')" != 40 ] || [ "$conflicts" != 80 ]; then
        echo "Citus: two users claiming 20 paymentSeqs and 20 store transactions: $claims recorded, $conflicts refused," \
             "payments and transactions '$payments', $registry with their registry rows (expected 40, 80, '40 40', 40)" >&2
        ok=1
    fi
    notified=$(psql "$url" -Atqc "SELECT count(*) FROM ledger.notifications WHERE notification_id LIKE 'rn-%' AND user_id = '$owner' AND NOT parked")
    parked=$(psql "$url" -Atqc "SELECT count(*) FROM ledger.notifications WHERE parked")
    payments=$(psql "$url" -Atqc "SELECT count(*) FROM ledger.payments WHERE transaction_id LIKE 'rn-tx-%' AND user_id = '$owner'")
    if [ "$notified" != 30 ] || [ "$parked" != 0 ] || [ "$payments" != 30 ] || grep -l ERROR "$lines"/notified.* "$lines"/recorded.* >/dev/null; then
        echo "Citus: 30 notifications with their SDK lines at once: $notified the user's, $parked parked, $payments payments (expected 30, 0, 30):" >&2
        cat "$lines"/notified.* "$lines"/recorded.* | sort | uniq -c >&2
        ok=1
    fi
    citus_verify_passes "$url" "the races" || ok=1
    citus_audit_2pc "$offset" "the races" || ok=1
    [ $ok -eq 0 ] && echo "  320 consumes of 10 payments from 32 processes: 10 consumed; 2 users on different workers claiming 40 keys:" \
        "each recorded once, its registry rows the winner's; 30 notifications racing their SDK lines" \
        "($(cat "$lines"/notified.* | grep -c '^parked') parked first and released): each the user's, none parked; verify passes"
    citus_drop_database "$name"
    return $ok
}

# The acceptance scenarios, each in a database of its own made on every node with the extension
# and the node list (both are per database): run-scenarios calls back here.
citus_check_scenarios() {
    local scenarios="$ROOT/../shared/tools/run-scenarios"
    [ -f "$scenarios" ] || return 0
    local offset ok=0
    echo "  the acceptance scenarios on the coordinator:"
    offset=$(citus_log_offset)
    CITUS_AUDIT_2PC=1 python3 "$scenarios" --ledger "$CITUS_LEDGER" --server "$(citus_server 0)" \
        --create-db-cmd "$ROOT/scripts/dev citus createdb {db}" \
        --drop-db-cmd "$ROOT/scripts/dev citus dropdb {db}" \
        "$ROOT/../shared/scenarios" "$ROOT/../shared/scenarios/next" | sed 's/^/  /'
    [ "${PIPESTATUS[0]}" -eq 0 ] || ok=1
    citus_audit_2pc "$offset" "the scenarios" || ok=1
    return $ok
}

# The tests that need a server of their own run again, each on a Citus coordinator with two
# workers of its own (PrivateCluster, LEDGER_TEST_CITUS=1). The catch-up reader's (the feed's and
# the webhooks' reader), whose horizon is the whole node's, so that no other test may write
# there: the two that run on one server too (a reader waits for an older open transaction; eight
# writers, here in 2PC transactions across the workers), the power of ten of transaction ids, and
# a transaction committed on the coordinator and still prepared on a worker, and writers on every
# node, each in its own ids and range of positions (a checkpoint per node group). And the
# rebuild's and the verify's with such a transaction, which need Citus's recovery off. And
# commands run on the workers: two users claiming one key on two workers, a parked notification
# and its SDK line on two workers, the same line missing the notification in the window between
# two nodes' commits and two sweeps releasing it at once, a subscription bought on one worker and
# renewed on the other, a Google token and a product declared on two nodes in the order their
# positions invert, and the span statements on the user's shard tables. All must run: none may
# be skipped.
citus_check_private_clusters() {
    local log="$CITUS_HOME/private-clusters.log"
    echo "  the catch-up reader's, the rebuild's, the verify's and the workers' commands' tests on Citus clusters of their own:"
    (cd "$ROOT" && LEDGER_TEST_CITUS=1 swift test -c release --disable-testable-imports --skip-build \
        --filter 'CatchUpReaderHorizon|CatchUpReaderAcrossXidDigits|RebuildOnCitus|CommandsOnWorkers') >"$log" 2>&1
    local status=$?
    if [ $status -eq 0 ] && grep -q "Test run with 24 tests in 5 suites passed" "$log" && ! grep -q "skipped" "$log"; then
        grep -E "Test run with" "$log" | sed 's/^/  /'
    else
        grep -E "✘|skipped|error|Test run with" "$log" | head -40 | sed 's/^/  /'
        echo "  (the whole output: $log)"
        return 1
    fi
}

# The model-based test, each of its databases made the same way (TestDatabase).
citus_check_model() {
    local log="$CITUS_HOME/model-based.log"
    echo "  the model-based test on the coordinator:"
    if (cd "$ROOT" && LEDGER_TEST_SERVER="$(citus_server 0)" \
            LEDGER_TEST_CREATE_DB_CMD="$ROOT/scripts/dev citus createdb {db}" \
            LEDGER_TEST_DROP_DB_CMD="$ROOT/scripts/dev citus dropdb {db}" \
            swift test -c release --disable-testable-imports --skip-build --filter ModelBasedTests) >"$log" 2>&1; then
        grep -E "Test run with" "$log" | sed 's/^/  /'
    else
        grep -E "✘|error|Test run with" "$log" | head -40 | sed 's/^/  /'
        echo "  (the whole output: $log)"
        return 1
    fi
}

# scripts/dev citus [start | stop | status | env | createdb NAME | dropdb NAME | kill-worker]
citus_command() {
    local sub=${1:-start}
    shift || true
    case "$sub" in
        start)
            citus_start
            echo "export DATABASE_URL='$(citus_conninfo 0 ledger)'"
            ;;
        env)
            citus_start >/dev/null
            printf 'export DATABASE_URL=%q\nexport LEDGER_TEST_SERVER=%q\n' "$(citus_conninfo 0 ledger)" \
                "$(citus_server 0)"
            ;;
        stop) citus_stop ;;
        status) citus_status ;;
        createdb) citus_create_database "${1:?scripts/dev citus createdb NAME}" ;;
        kill-worker) citus_start >/dev/null && citus_check_worker_killed ;;
        # The Citus phase of scripts/dev test alone (a release build and its tests built first).
        check) citus_smoke ;;
        dropdb) citus_drop_database "${1:?scripts/dev citus dropdb NAME}" ;;
        *) echo "scripts/dev citus: unknown command '$sub' (start, stop, status, env, createdb NAME, dropdb NAME, kill-worker, check)" >&2; return 2 ;;
    esac
}
