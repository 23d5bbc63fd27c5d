#!/usr/bin/env bash
# A local multi-replica deployment from real parts: N `switchyard serve` replicas, HAProxy in
# front, Prometheus scraping every replica. Everything it starts is recorded by pid in the
# state folder (--dir, default ./cluster-run) and stopped by pid.
#
#   scripts/cluster.sh up [--replicas N] [--config C] [--port P] [--balance leastconn|hash]
#                         [--hash-header X-Session-Id] [--cores-per-replica K]
#                         [--prometheus-port Q | --no-prometheus] [--switchyard BIN] [--dir D]
#   scripts/cluster.sh status        each replica's URL, requests served and state
#   scripts/cluster.sh kill-replica K    SIGKILL replica K (1-based): a fault test
#   scripts/cluster.sh reload [--config C]   restart each replica in turn, drained in HAProxy first
#   scripts/cluster.sh down          stop everything this folder's `up` started
#   scripts/cluster.sh bench [--counts 1,2] [--bench-config B] [--out D] [up's options]
#                         for each count: up, `switchyard bench --endpoint` the frontend, down;
#                         D/cluster.md sets what each count measured beside the capacity model
#
# HAProxy: leastconn by default, or a consistent hash of a request header (prefix affinity:
# requests of one session land where its prefix is cached); health checks on /health (503
# while a replica loads or drains); `retry-on conn-failure empty-response 503` with redispatch,
# so a request that had not started streaming when its replica died or drained is sent to
# another one. Replicas hold their response headers until the first token, so "not started"
# covers everything until a token is out.
set -euo pipefail

die() {
  echo "cluster.sh: $*" >&2
  exit 1
}

cmd="${1:-}"
[ -n "$cmd" ] || die "usage: cluster.sh up|status|kill-replica K|reload|down [options] (see the header of this script)"
shift

DIR="${SY_CLUSTER_DIR:-cluster-run}"
REPLICAS=2
CONFIG="configs/dense.toml"
PORT=8080
BALANCE=leastconn
HASH_HEADER="X-Session-Id"
CORES_PER_REPLICA=""
PROM_PORT=""
PROMETHEUS=1
BIN=""
KILL_INDEX=""
NEW_CONFIG=""
COUNTS="1,2"
BENCH_CONFIG="configs/cluster-bench.toml"
BENCH_OUT="bench-out/cluster"
while [ $# -gt 0 ]; do
  case "$1" in
    --replicas) REPLICAS="$2"; shift 2 ;;
    --config) CONFIG="$2"; NEW_CONFIG="$2"; shift 2 ;;
    --port) PORT="$2"; shift 2 ;;
    --balance) BALANCE="$2"; shift 2 ;;
    --hash-header) HASH_HEADER="$2"; shift 2 ;;
    --cores-per-replica) CORES_PER_REPLICA="$2"; shift 2 ;;
    --prometheus-port) PROM_PORT="$2"; shift 2 ;;
    --no-prometheus) PROMETHEUS=0; shift ;;
    --switchyard) BIN="$2"; shift 2 ;;
    --dir) DIR="$2"; shift 2 ;;
    --counts) COUNTS="$2"; shift 2 ;;
    --bench-config) BENCH_CONFIG="$2"; shift 2 ;;
    --out) BENCH_OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *)
      if [ "$cmd" = kill-replica ] && [ -z "$KILL_INDEX" ]; then KILL_INDEX="$1"; shift
      else die "unknown option '$1'"; fi ;;
  esac
done

STATE="$DIR/state.env"
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
STATE="$DIR/state.env"

# --- helpers -------------------------------------------------------------------------------

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
pid_of() { cat "$DIR/pids/$1.pid" 2>/dev/null || true; }

# A port nothing listens on (probed; what binds it first wins, so take it right away).
free_port() {
  local p
  for _ in $(seq 200); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  die "no free port found"
}

# Polls `cond` (a command) every 0.1 s for at most $1 seconds.
wait_for() {
  local limit="$1"; shift
  local end=$((SECONDS + limit))
  while [ $SECONDS -lt $end ]; do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  "$@" >/dev/null 2>&1
}

healthy() { curl -fsS -m 2 "http://127.0.0.1:$1/health" >/dev/null; }

# One command on HAProxy's runtime API (a TCP stats socket at admin level).
haproxy_cmd() {
  exec 3<>"/dev/tcp/127.0.0.1/$ADMIN_PORT" || return 1
  printf '%s\n' "$1" >&3
  cat <&3
  exec 3>&- 3<&-
}

# A field of `show stat` for backend `replicas`, server rK: scur (sessions now) or status.
server_field() {
  haproxy_cmd "show stat" | awk -F, -v s="r$1" -v f="$2" '
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == f || $i == "# " f) col = i; next }
    $1 == "replicas" && $2 == s { print $col }'
}

ncores() { nproc 2>/dev/null || echo 1; }

# The cores replica k (1-based) is pinned to: N replicas split the cores evenly (or take
# CORES_PER_REPLICA each, wrapping around), so each replica's backend threads match its cores.
cores_of() {
  local k=$1 n=$REPLICAS c per first list=""
  c=$(ncores)
  per="${CORES_PER_REPLICA:-$(( c / n > 0 ? c / n : 1 ))}"
  first=$(( ((k - 1) * per) % c ))
  for ((i = 0; i < per; i++)); do list+="${list:+,}$(( (first + i) % c ))"; done
  echo "$list"
}

# Starts replica k on port $2 (0: any; the port it got is read from its log). Waits until
# /health answers 200.
start_replica() {
  local k=$1 port=$2 log="$DIR/logs/replica-$k.log" pid got=""
  : >"$log"
  taskset -c "$(cores_of "$k")" "$BIN" serve --config "$CONFIG" --host 127.0.0.1 --port "$port" \
    >>"$log" 2>&1 &
  pid=$!
  echo "$pid" >"$DIR/pids/replica-$k.pid"
  local end=$((SECONDS + 60))
  while [ -z "$got" ] && [ $SECONDS -lt $end ]; do
    alive "$pid" || { tail -n 20 "$log" >&2; die "replica $k exited during startup (log: $log)"; }
    got=$(sed -n 's|^switchyard serving on http://127.0.0.1:\([0-9]*\)$|\1|p' "$log" | head -n1)
    [ -n "$got" ] || sleep 0.1
  done
  [ -n "$got" ] || die "replica $k did not bind within 60 s (log: $log)"
  wait_for 120 healthy "$got" || { tail -n 20 "$log" >&2; die "replica $k never became healthy (log: $log)"; }
  echo "$got" >"$DIR/ports/replica-$k"
}

stop_pid() {  # TERM (a replica drains), then KILL after $2 seconds
  local pid=$1 grace=${2:-10}
  alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  local end=$((SECONDS + grace))
  while alive "$pid" && [ $SECONDS -lt $end ]; do sleep 0.1; done
  alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
  while alive "$pid"; do sleep 0.05; done
}

write_haproxy_cfg() {
  local f="$DIR/haproxy.cfg" k
  {
    echo "# written by scripts/cluster.sh up"
    echo "global"
    echo "  maxconn 4096"
    echo "  stats socket ipv4@127.0.0.1:$ADMIN_PORT level admin"
    echo "  log stdout format raw local0 info"
    echo "defaults"
    echo "  mode http"
    echo "  log global"
    echo "  option httplog"
    echo "  timeout connect 2s"
    echo "  timeout client 600s"
    echo "  timeout server 600s"
    echo "  timeout queue 60s"
    echo "  # a replica that refuses the connection, closes it before answering, or is draining"
    echo "  # (503) has not started the request: send it to another replica"
    echo "  retries 3"
    echo "  option redispatch 1"
    echo "  retry-on conn-failure empty-response 503"
    echo "  # a retry resends the request from HAProxy's buffer, so the whole request must be there"
    echo "  # before it goes out: clients that write the body after the headers (cpp-httplib, curl"
    echo "  # with large bodies) would otherwise get a 502 from a replica that died first"
    echo "  option http-buffer-request"
    echo "frontend switchyard"
    echo "  bind 127.0.0.1:$PORT"
    echo "  default_backend replicas"
    echo "backend replicas"
    if [ "$BALANCE" = hash ]; then
      echo "  balance hdr($HASH_HEADER)  # no header: round robin"
      echo "  hash-type consistent"
    else
      echo "  balance leastconn"
    fi
    echo "  option httpchk GET /health"
    echo "  http-check expect status 200"
    echo "  default-server inter 500ms fastinter 250ms downinter 500ms fall 2 rise 2"
    for ((k = 1; k <= REPLICAS; k++)); do
      echo "  server r$k 127.0.0.1:$(cat "$DIR/ports/replica-$k") check"
    done
    echo "listen stats  # HAProxy's own metrics and stats page"
    echo "  bind 127.0.0.1:$STATS_PORT"
    echo "  http-request use-service prometheus-exporter if { path /metrics }"
    echo "  stats enable"
    echo "  stats uri /"
  } >"$f"
}

write_prometheus_cfg() {
  local f="$DIR/prometheus.yml" k
  {
    echo "# written by scripts/cluster.sh up"
    echo "global:"
    echo "  scrape_interval: 1s"
    echo "scrape_configs:"
    echo "  - job_name: switchyard"
    echo "    static_configs:"
    echo "      - targets:"
    for ((k = 1; k <= REPLICAS; k++)); do
      echo "          - 127.0.0.1:$(cat "$DIR/ports/replica-$k")"
    done
    echo "  - job_name: haproxy"
    echo "    static_configs:"
    echo "      - targets: ['127.0.0.1:$STATS_PORT']"
  } >"$f"
}

save_state() {
  {
    echo "REPLICAS=$REPLICAS"
    echo "CONFIG='$CONFIG'"
    echo "PORT=$PORT"
    echo "BALANCE=$BALANCE"
    echo "HASH_HEADER='$HASH_HEADER'"
    echo "CORES_PER_REPLICA='$CORES_PER_REPLICA'"
    echo "BIN='$BIN'"
    echo "ADMIN_PORT=$ADMIN_PORT"
    echo "STATS_PORT=$STATS_PORT"
    echo "PROMETHEUS=$PROMETHEUS"
    echo "PROM_PORT='$PROM_PORT'"
  } >"$STATE"
}

load_state() {
  [ -f "$STATE" ] || die "no cluster in $DIR (run: cluster.sh up)"
  # shellcheck disable=SC1090
  . "$STATE"
}

served() {  # requests replica (port $1) finished, from its own counter
  curl -fsS -m 2 "http://127.0.0.1:$1/metrics" 2>/dev/null |
    awk '/^switchyard:request_success_total[{ ]/ { n += $NF } END { if (NR) printf "%d", n }'
}

# --- commands ------------------------------------------------------------------------------

case "$cmd" in
  up)
    if alive "$(pid_of haproxy)"; then die "a cluster is already up in $DIR (cluster.sh down first)"; fi
    [[ "$REPLICAS" =~ ^[1-9][0-9]*$ ]] || die "--replicas must be a positive integer"
    [ "$BALANCE" = leastconn ] || [ "$BALANCE" = hash ] || die "--balance must be leastconn or hash"
    [ -f "$CONFIG" ] || die "no config file '$CONFIG'"
    CONFIG="$(cd "$(dirname "$CONFIG")" && pwd)/$(basename "$CONFIG")"
    [ -n "$BIN" ] || BIN="$(cd "$(dirname "$0")/.." && pwd)/build/switchyard"
    [ -x "$BIN" ] || die "no switchyard binary at $BIN (build first, or --switchyard BIN)"
    command -v haproxy >/dev/null || die "haproxy is not installed (scripts/install-deps.sh)"
    if [ "$PROMETHEUS" = 1 ]; then
      command -v prometheus >/dev/null || die "prometheus is not installed (scripts/install-deps.sh), or pass --no-prometheus"
    fi
    rm -rf "$DIR/pids" "$DIR/ports" "$DIR/logs"
    mkdir -p "$DIR/pids" "$DIR/ports" "$DIR/logs"
    ADMIN_PORT=$(free_port)
    STATS_PORT=$(free_port)
    [ "$PROMETHEUS" = 0 ] || PROM_PORT="${PROM_PORT:-$(free_port)}"
    save_state
    for ((k = 1; k <= REPLICAS; k++)); do start_replica "$k" 0; done
    write_haproxy_cfg
    haproxy -c -f "$DIR/haproxy.cfg" >/dev/null || die "haproxy refused $DIR/haproxy.cfg"
    haproxy -db -f "$DIR/haproxy.cfg" >>"$DIR/logs/haproxy.log" 2>&1 &
    echo $! >"$DIR/pids/haproxy.pid"
    up_all() { for ((k = 1; k <= REPLICAS; k++)); do [ "$(server_field "$k" status)" = UP ] || return 1; done; }
    wait_for 30 up_all || die "HAProxy does not see every replica UP (log: $DIR/logs/haproxy.log)"
    if [ "$PROMETHEUS" = 1 ]; then
      write_prometheus_cfg
      prometheus --config.file="$DIR/prometheus.yml" --storage.tsdb.path="$DIR/prometheus-data" \
        --web.listen-address="127.0.0.1:$PROM_PORT" >>"$DIR/logs/prometheus.log" 2>&1 &
      echo $! >"$DIR/pids/prometheus.pid"
      wait_for 60 curl -fsS -m 2 "http://127.0.0.1:$PROM_PORT/-/ready" ||
        die "prometheus did not become ready (log: $DIR/logs/prometheus.log)"
    fi
    "$0" status --dir "$DIR"
    ;;

  status)
    load_state
    echo "frontend http://127.0.0.1:$PORT balance $BALANCE haproxy pid $(pid_of haproxy)$(alive "$(pid_of haproxy)" || echo ' (not running)')"
    echo "haproxy stats http://127.0.0.1:$STATS_PORT/metrics"
    if [ "$PROMETHEUS" = 1 ]; then
      echo "prometheus http://127.0.0.1:$PROM_PORT pid $(pid_of prometheus)$(alive "$(pid_of prometheus)" || echo ' (not running)')"
    fi
    for ((k = 1; k <= REPLICAS; k++)); do
      port=$(cat "$DIR/ports/replica-$k")
      pid=$(pid_of "replica-$k")
      n=$(served "$port" || true)
      state="down"
      alive "$pid" && state=$(server_field "$k" status 2>/dev/null || echo "?")
      echo "replica $k http://127.0.0.1:$port/metrics served ${n:-?} ($state, pid $pid)"
    done
    ;;

  kill-replica)
    load_state
    [[ "$KILL_INDEX" =~ ^[0-9]+$ ]] && [ "$KILL_INDEX" -ge 1 ] && [ "$KILL_INDEX" -le "$REPLICAS" ] ||
      die "kill-replica takes a replica number in 1..$REPLICAS"
    pid=$(pid_of "replica-$KILL_INDEX")
    alive "$pid" || die "replica $KILL_INDEX is not running"
    kill -KILL "$pid"
    while alive "$pid"; do sleep 0.05; done
    echo "killed replica $KILL_INDEX (pid $pid)"
    ;;

  reload)
    load_state
    if [ -n "$NEW_CONFIG" ]; then
      [ -f "$NEW_CONFIG" ] || die "no config file '$NEW_CONFIG'"
      CONFIG="$(cd "$(dirname "$NEW_CONFIG")" && pwd)/$(basename "$NEW_CONFIG")"
      save_state
    fi
    [ "$REPLICAS" -gt 1 ] || echo "cluster.sh: warning: with one replica the frontend has none while it restarts" >&2
    for ((k = 1; k <= REPLICAS; k++)); do
      port=$(cat "$DIR/ports/replica-$k")
      # Drain in HAProxy: no new requests go there, the ones it has finish.
      haproxy_cmd "set server replicas/r$k state drain" >/dev/null
      idle() { [ "$(server_field "$k" scur)" = 0 ]; }
      wait_for 300 idle || echo "cluster.sh: replica $k still has sessions after 300 s; restarting it anyway" >&2
      stop_pid "$(pid_of "replica-$k")" 30
      start_replica "$k" "$port"
      haproxy_cmd "set server replicas/r$k state ready" >/dev/null
      up_k() { [ "$(server_field "$k" status)" = UP ]; }
      wait_for 30 up_k || die "HAProxy does not see replica $k UP after its restart"
      echo "reloaded replica $k (pid $(pid_of "replica-$k"))"
    done
    ;;

  down)
    load_state
    stop_pid "$(pid_of haproxy)" 5
    stop_pid "$(pid_of prometheus)" 10
    for ((k = 1; k <= REPLICAS; k++)); do stop_pid "$(pid_of "replica-$k")" 30; done
    rm -f "$DIR"/pids/*.pid "$STATE"
    echo "stopped"
    ;;

  bench)
    [ -n "$BIN" ] || BIN="$(cd "$(dirname "$0")/.." && pwd)/build/switchyard"
    for n in ${COUNTS//,/ }; do
      args=(up --replicas "$n" --config "$CONFIG" --port "$PORT" --balance "$BALANCE"
        --hash-header "$HASH_HEADER" --switchyard "$BIN" --dir "$DIR" --no-prometheus)
      [ -z "$CORES_PER_REPLICA" ] || args+=(--cores-per-replica "$CORES_PER_REPLICA")
      "$0" "${args[@]}"
      rc=0
      "$BIN" bench --endpoint "http://127.0.0.1:$PORT" --replicas "$n" --config "$BENCH_CONFIG" \
        --out "$BENCH_OUT" || rc=$?
      "$0" down --dir "$DIR"
      [ "$rc" = 0 ] || die "bench against $n replica(s) failed ($rc)"
    done
    echo "cluster report: $BENCH_OUT/cluster.md"
    ;;

  *) die "unknown command '$cmd' (up, status, kill-replica, reload, down, bench)" ;;
esac
