# Shared by scripts/up, scripts/test and bench/: packages, build, a private PostgreSQL.
# Source it; it defines functions and REPO_ROOT, nothing runs on source.

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Every Debian package Portcullis builds, tests or runs with.
PORTCULLIS_PACKAGES=(
  g++ cmake ninja-build pkg-config ccache git ca-certificates curl procps
  libgrpc++-dev libgrpc-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libssl-dev libpqxx-dev libc-ares-dev libcurl4-openssl-dev libboost1.81-dev libboost-json1.81-dev
  libgumbo-dev libicu-dev libspdlog-dev prometheus-cpp-dev libgtest-dev libgmock-dev libcbor-dev
  libbenchmark-dev libgoogle-perftools-dev postgresql-15 nodejs chromium
)

# What scripts/fuzz needs on top: clang with libFuzzer and the sanitizer runtimes, jq for seeds.
PORTCULLIS_FUZZ_PACKAGES=(clang-14 libclang-rt-14-dev jq)

# What bench/load needs on top (the load generator and the reference servers).
PORTCULLIS_BENCH_PACKAGES=(wrk nginx-light golang-go openssl)

log() { printf '%s %s\n' "[$(date -u +%H:%M:%S)]" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Installs the packages that `dpkg -s` does not show as installed (apt-get update once first).
ensure_packages() {
  local missing=()
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  # npm: Debian's package when the machine's Node.js does not bring its own (NodeSource's does,
  # and conflicts with Debian's npm).
  if [[ " $* " == *" nodejs "* ]] && ! command -v npm >/dev/null 2>&1; then
    missing+=(npm)
  fi
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || die "missing packages (${missing[*]}); run as root or install them"
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}

# build PRESET [TARGET...]: configures once, then builds.
build() {
  local preset=$1; shift
  if [ ! -f "$REPO_ROOT/build/$preset/build.ninja" ]; then
    cmake --preset "$preset" -S "$REPO_ROOT" >/dev/null
  fi
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$REPO_ROOT/build/$preset" "${targets[@]}"
}

pg_bindir() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -x "$dir/initdb" ] || die "PostgreSQL server binaries not found (package postgresql-15)"
  echo "$dir"
}

# Runs a PostgreSQL server command as the postgres user when we are root (initdb refuses root).
pg_as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# pg_start DIR: starts (creating it if needed) a private cluster in DIR/data that listens only on
# a Unix socket in DIR (no TCP port, so nothing clashes). Recovers a cluster left by a crash.
# Prints the libpq connection string (without dbname) on stdout.
pg_start() {
  local dir=$1 bin
  bin=$(pg_bindir)
  mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    rm -rf "$dir/data"
    pg_as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
  fi
  if pg_as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    log "PostgreSQL already running in $dir"
  else
    # A crash can leave postmaster.pid behind; pg_ctl start checks whether that PID is alive.
    pg_as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
      -o "-c listen_addresses='' -c unix_socket_directories='$dir' -c max_connections=200 -c fsync=${PG_FSYNC:-on}" \
      >/dev/null || { tail -n 20 "$dir/server.log" >&2; die "PostgreSQL did not start"; }
  fi
  echo "host=$dir user=postgres"
}

# pg_stop DIR: fast shutdown of the cluster in DIR, if it runs.
pg_stop() {
  local dir=$1 bin
  bin=$(pg_bindir)
  [ -f "$dir/data/PG_VERSION" ] || return 0
  pg_as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1 || true
}

# ensure_promtool: prints the path of a promtool binary (Prometheus' own metrics-format checker),
# taken from Debian's prometheus package without installing it (installing would start a server).
ensure_promtool() {
  if command -v promtool >/dev/null 2>&1; then
    command -v promtool
    return 0
  fi
  local dir="$REPO_ROOT/.cache/promtool"
  if [ ! -x "$dir/usr/bin/promtool" ]; then
    log "fetching promtool from Debian's prometheus package"
    mkdir -p "$dir"
    (cd "$dir" && { apt-get download prometheus >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null && apt-get download prometheus >/dev/null; }; } &&
      dpkg-deb -x prometheus_*.deb . && rm -f prometheus_*.deb usr/bin/prometheus) ||
      die "cannot fetch Debian's prometheus package for promtool"
  fi
  echo "$dir/usr/bin/promtool"
}
