#!/usr/bin/env bash
# Seeds fuzz/corpus/<target>/ (not committed; libFuzzer grows it) from the regression inputs,
# the committed fixtures and a generated DB. Run from anywhere; then for example
#   cd fuzz && cargo +nightly fuzz run memory_record -- -max_total_time=600
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd .. && pwd)
targets="value memory_record operator_memory npu_module_mem static_op_mem folder db pickle trace_view pytorch_trace msmemscope snapshot_fields module_spans mcp_request"
for t in $targets; do
  mkdir -p "corpus/$t"
  cp regressions/"$t"/* "corpus/$t/"
done
name() { printf '%s' "$1" | sha1sum | cut -c1-16; }
for kind in memory_record operator_memory npu_module_mem static_op_mem; do
  find "$root/fixtures" -name "${kind}*.csv" | while read -r f; do
    head -c 16384 "$f" > "corpus/$kind/$(name "$f")" # small seeds keep executions fast
  done
done
# trace_view: the head of each fixture's trace_view.json.
find "$root/fixtures" -name trace_view.json | while read -r f; do
  head -c 16384 "$f" > "corpus/trace_view/$(name "$f")"
done
# value: distinct cells of the fixtures.
find "$root/fixtures" -name '*.csv' -exec head -n 50 {} + | tr ',' '\n' | sort -u | head -n 400 |
  while IFS= read -r cell; do printf '%s' "$cell" > "corpus/value/$(name "$cell")"; done
# folder: each fixture rank's files joined by the separator line.
find "$root/fixtures" -type d -name ASCEND_PROFILER_OUTPUT | while read -r d; do
  out="corpus/folder/$(name "$d")"
  : > "$out"
  for k in memory_record operator_memory npu_module_mem static_op_mem; do
    f=$(find "$d" -maxdepth 1 -name "$k*.csv" | head -n 1)
    if [ -n "$f" ]; then head -c 8192 "$f" >> "$out"; fi
    printf '\n=====\n' >> "$out"
  done
  info=$(find "$(dirname "$d")" -maxdepth 1 -name 'profiler_info*.json' | head -n 1)
  if [ -n "$info" ]; then cat "$info" >> "$out"; fi
done
# db: small generated SQLite exports.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo run -q --release --no-default-features --manifest-path "$root/Cargo.toml" -- \
  generate "$tmp/g" --db only --allocs 300 >/dev/null
find "$tmp/g" -name '*.db' | while read -r f; do cp "$f" "corpus/db/$(name "$f")"; done
# pickle: the real torch_npu snapshots, when the shared samples are beside the checkout.
samples="${MEMSIGHT_SAMPLES:-$root/../shared/samples}"
find "$samples" -name '*.pkl' 2>/dev/null | while read -r f; do cp "$f" "corpus/pickle/$(name "$f")"; done
# snapshot_fields: the committed snapshots with the newer fields (annotations, compile regions,
# pools, pinned memory, FX frames) and the real OOM snapshots, when under 2 MB.
{ find "$root/fixtures" -name '*.pickle'; find "$samples" -name '*.pickle' -size -2M 2>/dev/null; } |
  while read -r f; do cp "$f" "corpus/snapshot_fields/$(name "$f")"; done
echo "seeded: $(for t in $targets; do printf '%s=%s ' "$t" "$(ls "corpus/$t" | wc -l)"; done)"
