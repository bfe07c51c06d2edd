#!/usr/bin/env bash
# Cold start of the local server, measured with hyperfine: the time from launching
# `chatctx serve` until the MCP endpoint answers an HTTP request, then stop.
#   first start: empty data directory (migrations + starter corpus import)
#   restart:     existing data directory
# Prints hyperfine's table and writes bench-results/cold-start.json.
# Needs hyperfine (Debian: apt-get install hyperfine) and curl.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${RUNS:-5}"
port="${BENCH_PORT:-18787}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
mkdir -p bench-results

start_and_wait="CHATCTX_DATA_DIR=$dir/data PORT=$port node bin/chatctx.js serve >/dev/null 2>&1 & pid=\$!; \
until curl -sf -o /dev/null http://127.0.0.1:$port/llms.txt; do sleep 0.02; done; kill \$pid; wait \$pid || true"

hyperfine --runs "$runs" --shell bash \
  --prepare "rm -rf $dir/data" -n 'first start (empty data dir)' "$start_and_wait" \
  --export-json bench-results/cold-start-first.json
# Seed the data directory once, then time restarts on it.
bash -c "$start_and_wait"
hyperfine --runs "$runs" --shell bash -n 'restart (existing data dir)' "$start_and_wait" \
  --export-json bench-results/cold-start-restart.json

node -e '
const fs = require("fs");
const read = (f) => JSON.parse(fs.readFileSync(f, "utf8")).results[0];
const rows = [read("bench-results/cold-start-first.json"), read("bench-results/cold-start-restart.json")];
const out = { cores: require("os").cpus().length, node: process.version, runs: rows[0].times.length,
  results: rows.map((r) => ({ scenario: r.command, median_s: r.median, mean_s: r.mean, min_s: r.min, max_s: r.max })) };
fs.writeFileSync("bench-results/cold-start.json", JSON.stringify(out, null, 2) + "\n");
console.log("\n| scenario | median | min | max |\n|---|---|---|---|");
for (const r of out.results) console.log(`| ${r.scenario} | ${r.median_s.toFixed(2)} s | ${r.min_s.toFixed(2)} s | ${r.max_s.toFixed(2)} s |`);
'
