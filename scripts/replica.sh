# Sourced by scripts/dev after scripts/pg.sh: a PostgreSQL streaming replica of the private
# cluster, under .ledger/replica, for the tests of reads from replicas and for trying
# LEDGER_READ_DATABASE_URL (README, "Reads from replicas").

REPLICA_HOME="$ROOT/.ledger/replica"
REPLICA_DATA="$REPLICA_HOME/data"
REPLICA_PORT=${LEDGER_REPLICA_PORT:-$(( PG_PORT + 1 ))}

replica_conninfo() { # database
    echo "host=$(pg_socket_dir) port=$REPLICA_PORT user=ledger dbname=$1"
}

replica_streaming() {
    [ "$(psql "$(replica_conninfo postgres)" -Atqc "SELECT status FROM pg_stat_wal_receiver" 2>/dev/null)" = streaming ]
}

# Starts the replica's server on its data folder.
replica_server_start() {
    pg_run "$PG_BIN/pg_ctl" -D "$REPLICA_DATA" -l "$REPLICA_HOME/postgres.log" -w -t 120 \
        -o "-k $(pg_socket_dir) -p $REPLICA_PORT -c shared_buffers=512MB" start >/dev/null
}

# Waits up to $1 tenths of a second for the replica to stream; returns whether it does.
replica_wait_streaming() {
    local tries=0
    until replica_streaming || [ $tries -ge "$1" ]; do sleep 0.1; tries=$((tries + 1)); done
    replica_streaming
}

# Starts the replica, first copying the primary (pg_basebackup) when there is none or the one
# there does not stream from it (a primary made again). Copying takes seconds for a few GB.
replica_start() {
    pg_private_start
    if [ -f "$REPLICA_DATA/PG_VERSION" ]; then
        if ! pg_run "$PG_BIN/pg_ctl" -D "$REPLICA_DATA" status >/dev/null 2>&1; then
            echo "== starting the replica (port $REPLICA_PORT)" >&2
            replica_server_start || true
        fi
        replica_wait_streaming 50 && return 0
        echo "== the replica in $REPLICA_DATA does not stream from the primary: copying the primary again" >&2
        replica_stop >/dev/null 2>&1 || true
    fi
    rm -rf "$REPLICA_DATA"
    mkdir -p "$REPLICA_HOME"
    pg_prepare_owner "$REPLICA_HOME"
    echo "== copying the primary into a streaming replica in $REPLICA_DATA (port $REPLICA_PORT)" >&2
    pg_run "$PG_BIN/pg_basebackup" -h "$(pg_socket_dir)" -p "$PG_PORT" -U ledger -D "$REPLICA_DATA" -R -X stream \
        --checkpoint=fast --no-sync
    replica_server_start
    replica_wait_streaming 300 || { echo "the replica does not stream: see $REPLICA_HOME/postgres.log" >&2; return 1; }
}

replica_stop() {
    if [ -f "$REPLICA_DATA/PG_VERSION" ] && pg_run "$PG_BIN/pg_ctl" -D "$REPLICA_DATA" status >/dev/null 2>&1; then
        pg_run "$PG_BIN/pg_ctl" -D "$REPLICA_DATA" -m fast -w stop >/dev/null
    fi
}

# scripts/dev replica [start | stop | env]
replica_command() {
    case "${1:-start}" in
        start)
            replica_start
            echo "export LEDGER_READ_DATABASE_URL='$(replica_conninfo ledger)'"
            ;;
        env)
            replica_start >/dev/null
            printf 'export LEDGER_TEST_REPLICA=%q\n' "host=$(pg_socket_dir) port=$REPLICA_PORT user=ledger"
            ;;
        stop) replica_stop ;;
        *) echo "scripts/dev replica: unknown command '$1' (start, stop, env)" >&2; return 2 ;;
    esac
}
