#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 300), two at a time, and prints each target's
# executions. Needs nightly and cargo-fuzz (`cargo install cargo-fuzz`). An input that panics,
# writes into its folder, or runs longer than 10 s (-timeout: a hang) stops its target and is
# saved under fuzz/artifacts/<target>/; copy it into fuzz/regressions/<target>/ once fixed.
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-300}"
[ -d corpus ] || bash seed.sh
cargo +nightly fuzz build -O -s none
run() {
  local t=$1 s=$2
  cargo +nightly fuzz run -O -s none "$t" -- -max_total_time="$s" -timeout=10 \
    -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 > "target/fuzz-$t.log" 2>&1 || true
  printf '%-16s %12s executions  %s\n' "$t" \
    "$(grep -o 'number_of_executed_units: [0-9]*' "target/fuzz-$t.log" | grep -o '[0-9]*$')" \
    "$(grep -E -m1 'SUMMARY|panicked' "target/fuzz-$t.log" || echo 'no crash')"
}
pairs=("value memory_record" "operator_memory npu_module_mem" "static_op_mem folder" "db pickle" "trace_view pytorch_trace" "msmemscope summary" "mem_usage snapshot_fields" "module_spans mcp_request")
for p in "${pairs[@]}"; do
  for t in $p; do run "$t" "$secs" & done
  wait
done
