# Shared by bench/load and bench/verify: processes stopped by PID whatever happens, loopback
# ports, a private PostgreSQL, the two Portcullis services, and per-process CPU/RSS readings.
# Source it after scripts/lib/common.sh; call bench_init WORK_DIR first.

bench_init() {
  work=$1
  mkdir -p "$work/logs"
  bench_pids=()
  bench_pg_dir="$work/postgres"
  trap bench_stop_all EXIT
  trap 'bench_stop_all; exit 130' INT TERM
}

# Stops every process started through bench_spawn (TERM, then waits), then PostgreSQL.
bench_stop_all() {
  trap - INT TERM EXIT
  local pid
  for pid in "${bench_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${bench_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pg_stop "$bench_pg_dir" >/dev/null 2>&1 || true
}

# bench_spawn VAR LOG COMMAND...: starts COMMAND in the background with output to
# $work/logs/LOG.log, records its PID for bench_stop_all and in VAR.
bench_spawn() {
  local var=$1 name=$2; shift 2
  "$@" >"$work/logs/$name.log" 2>&1 &
  bench_pids+=($!)
  printf -v "$var" '%s' "$!"
}

# bench_stop PID: stops one process started through bench_spawn before the end, and forgets it
# (so the PID, free again, is not signalled at exit).
bench_stop() {
  local pid kept=()
  kill -TERM "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
  for pid in "${bench_pids[@]}"; do [ "$pid" = "$1" ] || kept+=("$pid"); done
  bench_pids=("${kept[@]}")
}

# die_exited NAME: a process of the bench ended early; the end of its log goes to stderr, so a CI
# run that keeps no files still says why.
die_exited() {
  log "$1 exited early; the end of $work/logs/$1.log:"
  tail -n 40 "$work/logs/$1.log" >&2 2>/dev/null || true
  die "$1 exited; see $work/logs/$1.log"
}

bench_port_in_use() { (exec 3<>"/dev/tcp/${2:-127.0.0.1}/$1") 2>/dev/null; }
# Ports below Linux's ephemeral range (32768 and up by default): a client socket of this run
# cannot take one between take_port and the server's bind.
bench_next_port=$((20000 + RANDOM % 10000))
take_port() {  # take_port VAR...: sets each VAR to a port free on 127.0.0.1
  local var
  for var in "$@"; do
    while bench_port_in_use "$bench_next_port"; do bench_next_port=$((bench_next_port + 1)); done
    printf -v "$var" '%s' "$bench_next_port"; bench_next_port=$((bench_next_port + 1))
  done
}

wait_http() {  # wait_http URL PID NAME: up to 30 s for any HTTP answer
  for _ in $(seq 150); do
    curl -s -o /dev/null "$1" && return 0
    kill -0 "$2" 2>/dev/null || die_exited "$3"
    sleep 0.2
  done
  die "$3 not answering after 30 s; see $work/logs/$3.log"
}

# bench_postgres DBNAME: a private cluster in $work/postgres with a fresh database; sets
# database_url, pg_pid and psql_admin (a function running SQL as the owner).
bench_postgres() {
  local postgres
  postgres=$(pg_start "$bench_pg_dir")
  psql_admin "DROP DATABASE IF EXISTS $1" >/dev/null 2>&1
  psql_admin "CREATE DATABASE $1" >/dev/null
  database_url="$postgres dbname=$1"
  pg_pid=$(head -n 1 "$bench_pg_dir/data/postmaster.pid")
}
psql_admin() { pg_as_owner "$(pg_bindir)/psql" -h "$bench_pg_dir" -U postgres -d postgres -qtAc "$1"; }
psql_bench() { pg_as_owner "$(pg_bindir)/psql" -h "$bench_pg_dir" -U postgres -d "$1" -qtAc "$2"; }

# bench_portcullis BIN_DIR VERIFIER_ARGS... -- GATEWAY_ARGS...: starts both services on free
# loopback ports and waits until the gateway is ready; sets verifier_pid, gateway_pid,
# grpc_port, http_port, and `portcullis` (the CLI bound to this verifier).
bench_portcullis() {
  local bin=$1; shift
  local verifier_args=() gateway_args=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do verifier_args+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  gateway_args=("$@")
  take_port grpc_port http_port admin_port
  # One API token with every scope (issue 9: every RPC carries one), for the gateway and the CLI;
  # only its SHA-256 goes into the verifier's tokens file.
  local token
  token="pct_$(openssl rand -hex 32)"
  printf '%s\n' "$token" >"$work/bench.token"
  printf '%s bench submit,read,fetch,admin\n' \
    "$(printf '%s' "$token" | sha256sum | cut -d' ' -f1)" >"$work/bench.tokens"
  chmod 600 "$work/bench.token" "$work/bench.tokens"
  export PORTCULLIS_TOKEN_FILE="$work/bench.token"
  bench_verifier verifier_pid "$grpc_port" verifier "$bin" "${verifier_args[@]}"
  bench_gateway gateway_pid "$http_port" "$admin_port" gateway "$grpc_port" "$bin" \
    "${gateway_args[@]}"
  bench_cli="$bin/tools/portcullis/portcullis"
}

# bench_verifier PID_VAR GRPC_PORT LOG BIN_DIR ARGS...: a verifier on 127.0.0.1:GRPC_PORT with
# the bench's database and tokens (bench_portcullis first); a flag in ARGS overrides the same one
# here (the last one given wins), e.g. --log_level.
bench_verifier() {
  local var=$1 port=$2 name=$3 bin=$4; shift 4
  bench_spawn "$var" "$name" "$bin/verifier-service/verifier-service" \
    --database_url="$database_url" --grpc_listen="127.0.0.1:$port" --log_level=warn \
    --tokens_file="$work/bench.tokens" "$@"
}

# bench_gateway PID_VAR HTTP_PORT ADMIN_PORT LOG GRPC_PORT BIN_DIR ARGS...: a gateway on
# 127.0.0.1:HTTP_PORT in front of the verifier on GRPC_PORT; waits until it is ready (which needs
# the verifier serving).
bench_gateway() {
  local var=$1 port=$2 admin=$3 name=$4 verifier=$5 bin=$6 ready; shift 6
  bench_spawn "$var" "$name" "$bin/ingest-gateway/ingest-gateway" \
    --http_listen="127.0.0.1:$port" --admin_listen="127.0.0.1:$admin" \
    --verifier="127.0.0.1:$verifier" --verifier_token_file="$work/bench.token" \
    --log_level=warn "$@"
  for _ in $(seq 150); do
    ready=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz" || true)
    [ "$ready" = 200 ] && return 0
    kill -0 "${!var}" 2>/dev/null || die_exited "$name"
    sleep 0.2
  done
  die "the gateway $name (and its verifier) not ready after 30 s; see $work/logs/"
}
portcullis() { "$bench_cli" --verifier="127.0.0.1:$grpc_port" "$@"; }

# bench_dns PID_VAR VERIFY_DNS NAMES_FILE: the bench/verify_dns binary VERIFY_DNS answering
# NAMES_FILE's names on a loopback port (every other name is NXDOMAIN); sets dns_address to its
# host:port.
bench_dns() {
  bench_spawn "$1" dns "$2" "$3"
  for _ in $(seq 100); do grep -q listening "$work/logs/dns.log" 2>/dev/null && break; sleep 0.1; done
  dns_address=$(awk '/^listening/ { print $2 }' "$work/logs/dns.log")
  [ -n "$dns_address" ] || die "the DNS server did not start; see $work/logs/dns.log"
}

tree_pids() {  # a process and its descendants
  local child
  echo "$1"
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do tree_pids "$child"; done
}
cpu_ticks() {  # user + system clock ticks of the process trees rooted at $@
  local total=0 pid root
  for pid in $(for root in "$@"; do tree_pids "$root"; done); do
    [ -r "/proc/$pid/stat" ] || continue
    total=$((total + $(sed 's/^.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}')))
  done
  echo "$total"
}
sched_us() {  # sched_us ROOT...: "RUN WAIT", µs on a CPU and waiting for one (the run queue),
  # summed over every thread of the process trees rooted at $@ (/proc/TID/schedstat)
  local pid root
  for pid in $(for root in "$@"; do tree_pids "$root"; done); do
    cat /proc/"$pid"/task/*/schedstat 2>/dev/null || true
  done | awk '{ run += $1; wait += $2 } END { printf "%d %d\n", run / 1000, wait / 1000 }'
}
named_thread_ticks() {  # named_thread_ticks PID NAME: clock ticks of PID's threads named NAME
  # One read of every thread's stat: "TID (NAME) STATE ..."; utime and stime are fields 12 and 13
  # after the name.
  cat /proc/"$1"/task/*/stat 2>/dev/null | awk -v name="$2" '
    match($0, /\(.*\)/) && substr($0, RSTART + 1, RLENGTH - 2) == name {
      split(substr($0, RSTART + RLENGTH + 1), field, " "); total += field[12] + field[13]
    }
    END { print total + 0 }'
}
peak_rss() { awk '/^VmHWM:/ {printf "%.0f MiB", $2 / 1024}' "/proc/$1/status"; }  # peak_rss PID
rss_kib() {  # resident memory of the process trees rooted at $@
  local total=0 pid kib root
  for pid in $(for root in "$@"; do tree_pids "$root"; done); do
    kib=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    total=$((total + ${kib:-0}))
  done
  echo "$total"
}
