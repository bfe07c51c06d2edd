#!/usr/bin/env bash
# Cold start of the local server, measured with hyperfine: the time from launching
# `chatctx serve` as `npm start` does (bin/serve.sh) until the MCP endpoint answers a ping (MCP requests wait until the
# server is ready; its documentation pages do not, so they would time the bound port),
# then stop.
#   first start: empty data directory (migrations + starter corpus import)
#   restart:     existing data directory
# Then resident memory once the starter corpus is embedded and the server settled,
# after first starts and after a restart of each (cold-start-report.mjs; Linux).
# Prints the tables and writes bench-results/cold-start.json (or --out FILE); --docs
# also writes docs/bench/cold-start.json and the section of docs/testing.md rendered
# from it.
# Needs hyperfine (Debian: apt-get install hyperfine) and curl; without them it says so
# and exits 3, which the benchmark test reads as "skip".
#   bash bin/bench/cold-start.sh [--quick] [--out FILE] [--docs]   (RUNS, BENCH_PORT from the environment)
# --quick (the benchmark test) times one run of each and measures memory once, on
# servers without the starter corpus: it checks the benchmark runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${RUNS:-5}"
memory_rounds=3
out="bench-results/cold-start.json"
docs=0
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) runs=1; memory_rounds=1; quick=1 ;;
    --out) out="${2:?--out takes a file}"; shift ;;
    --docs) docs=1 ;;
    *) echo "cold-start: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if [ "$docs" = 1 ] && [ "$quick" = 1 ]; then echo "cold-start: --docs records a full run; not with --quick" >&2; exit 2; fi
load_at_start="$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo null)"
for tool in hyperfine curl; do
  command -v "$tool" >/dev/null || { echo "cold-start: needs $tool, which is not installed" >&2; exit 3; }
done
port="${BENCH_PORT:-18787}"
dir="$(mktemp -d)"
# EXIT covers failures too (set -e); INT and TERM end the script, which then runs EXIT.
trap 'rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$(dirname "$out")"

# Timed: launch until the MCP endpoint answers. The server is left running and stopped
# untimed (hyperfine's --prepare before the next run, and once after the last), so that
# its shutdown is not counted as part of its start.
pidfile="$dir/server.pid"
# The command that launches a server (its output to $1) and waits until it answers.
launch_and_wait() {
  echo "CHATCTX_DATA_DIR=$dir/data PORT=$port sh bin/serve.sh >$1 2>&1 & echo \$! > $pidfile; \
until curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}' http://127.0.0.1:$port/mcp; do sleep 0.02; done"
}
start_and_wait="$(launch_and_wait /dev/null)"
stop_server="if [ -f $pidfile ]; then pid=\$(cat $pidfile); kill \$pid 2>/dev/null; while kill -0 \$pid 2>/dev/null; do sleep 0.05; done; rm -f $pidfile; fi"
# A server still running when the script ends (an error, an interrupt) is stopped before its directory goes.
trap 'bash -c "$stop_server"; rm -rf "$dir"' EXIT

hyperfine --runs "$runs" --shell bash \
  --prepare "$stop_server; rm -rf $dir/data" -n 'first start (empty data dir)' "$start_and_wait" \
  --export-json "$dir/first.json"
bash -c "$stop_server"
# Seed the data directory once, then time restarts on it. The seeding server runs until its
# background work is done (the starter corpus embedded, the statistics refreshed), as a first
# start a user leaves running does: stopped as soon as it answered, it left that work to the
# first timed restart (about 0.3 s of ANALYZE on its critical path, and the embedding beside it).
bash -c "$(launch_and_wait "$dir/seed.log")"
done_event='"event":"\(embeddings_current\|embedding_failed\)"'
# Without an encoder there is nothing to embed: ready is done.
[ "${CHATCTX_EMBEDDINGS:-}" = none ] && done_event='"event":"store_ready"'
waited=0
until grep -q "$done_event" "$dir/seed.log"; do
  waited=$((waited + 1))
  if [ "$waited" -gt 3000 ]; then echo "cold-start: the seeding server did not finish its background work in 300 s" >&2; exit 1; fi
  sleep 0.1
done
hyperfine --runs "$runs" --shell bash --prepare "$stop_server" -n 'restart (existing data dir)' "$start_and_wait" \
  --export-json "$dir/restart.json"
bash -c "$stop_server"

node --input-type=module - "$dir/first.json" "$dir/restart.json" "$out" "$dir" "$port" "$memory_rounds" "$docs" "$load_at_start" "$quick" <<'EOF'
import { readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { measureMemory, recordInDocs, renderColdStartSection } from "./bin/bench/cold-start-report.mjs";
const read = (f) => JSON.parse(readFileSync(f, "utf8")).results[0];
const [first, restart, file, dir, port, rounds, docs, load, quick] = process.argv.slice(2);
const rows = [read(first), read(restart)];
// Quick: the memory measure's servers start without the starter corpus, so they settle in seconds (nothing to embed).
if (quick === "1") process.env.CHATCTX_STARTER_CORPUS = "0";
const report = {
  cores: cpus().length, node: process.version, date: new Date().toISOString(), quick: quick === "1",
  runs: rows[0].times.length, load_average_1m: Number(load),
  results: rows.map((r) => ({ scenario: r.command, median_s: r.median, mean_s: r.mean, min_s: r.min, max_s: r.max })),
  memory: await measureMemory("bin/serve.sh", dir, Number(port), Number(rounds), quick === "1" ? 3 : undefined),
};
writeFileSync(file, JSON.stringify(report, null, 2) + "\n");
if (docs === "1") recordInDocs(process.cwd(), report);
console.log("\n" + renderColdStartSection(report));
EOF
