#!/usr/bin/env bash
# Cold start of the local server, measured with hyperfine: the time from launching
# `chatctx serve` until the MCP endpoint answers an HTTP request, then stop.
#   first start: empty data directory (migrations + starter corpus import)
#   restart:     existing data directory
# Prints hyperfine's table and writes bench-results/cold-start.json (or --out FILE).
# Needs hyperfine (Debian: apt-get install hyperfine) and curl; without them it says so
# and exits 3, which the benchmark test reads as "skip".
#   bash bin/bench/cold-start.sh [--quick] [--out FILE]   (RUNS, BENCH_PORT from the environment)
# --quick (the benchmark test) times one run of each: it checks the benchmark runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${RUNS:-5}"
out="bench-results/cold-start.json"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) runs=1 ;;
    --out) out="${2:?--out takes a file}"; shift ;;
    *) echo "cold-start: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
for tool in hyperfine curl; do
  command -v "$tool" >/dev/null || { echo "cold-start: needs $tool, which is not installed" >&2; exit 3; }
done
port="${BENCH_PORT:-18787}"
dir="$(mktemp -d)"
# EXIT covers failures too (set -e); INT and TERM end the script, which then runs EXIT.
trap 'rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$(dirname "$out")"

start_and_wait="CHATCTX_DATA_DIR=$dir/data PORT=$port node bin/chatctx.js serve >/dev/null 2>&1 & pid=\$!; \
until curl -sf -o /dev/null http://127.0.0.1:$port/llms.txt; do sleep 0.02; done; kill \$pid; wait \$pid || true"

hyperfine --runs "$runs" --shell bash \
  --prepare "rm -rf $dir/data" -n 'first start (empty data dir)' "$start_and_wait" \
  --export-json "$dir/first.json"
# Seed the data directory once, then time restarts on it.
bash -c "$start_and_wait"
hyperfine --runs "$runs" --shell bash -n 'restart (existing data dir)' "$start_and_wait" \
  --export-json "$dir/restart.json"

node - "$dir/first.json" "$dir/restart.json" "$out" <<'EOF'
const fs = require("fs");
const read = (f) => JSON.parse(fs.readFileSync(f, "utf8")).results[0];
const [first, restart, file] = process.argv.slice(2);
const rows = [read(first), read(restart)];
const out = { cores: require("os").cpus().length, node: process.version, runs: rows[0].times.length,
  results: rows.map((r) => ({ scenario: r.command, median_s: r.median, mean_s: r.mean, min_s: r.min, max_s: r.max })) };
fs.writeFileSync(file, JSON.stringify(out, null, 2) + "\n");
console.log("\n| scenario | median | min | max |\n|---|---|---|---|");
for (const r of out.results) console.log(`| ${r.scenario} | ${r.median_s.toFixed(2)} s | ${r.min_s.toFixed(2)} s | ${r.max_s.toFixed(2)} s |`);
EOF
