#!/usr/bin/env bash
# Writes every headless command's `--json` (its stdout, stderr and exit code) on the committed
# fixtures, and on $MEMSIGHT_SAMPLES' real exports when set, into OUT_DIR, one file a call.
# Run it before and after a refactor and `diff -r` the two folders: outputs must not change.
#   tests/outputs/json-outputs.sh [BIN] OUT_DIR
# BIN defaults to target/release/memsight. Nothing is written anywhere but OUT_DIR.
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ $# -ge 2 ]; then bin=$1; out=$2; else bin=target/release/memsight; out=${1:?OUT_DIR}; fi
mkdir -p "$out"

# One call: its name in OUT_DIR, then the command line after `memsight`.
call() {
  local name=$1
  shift
  "$bin" "$@" >"$out/$name.out" 2>"$out/$name.err"
  echo "rc=$?" >>"$out/$name.err"
}

# A profile: every per-rank question about it (the rank a user means, and each listed rank).
profile() {
  local name=$1 path=$2
  call "$name.inspect" inspect "$path" --json
  call "$name.explain" explain "$path" --json
  call "$name.steps" steps "$path" --json
  call "$name.roles" roles "$path" --json
  call "$name.modules" modules "$path" --json
  call "$name.stacks.line" stacks "$path" --by line --json
  call "$name.stacks.op" stacks "$path" --by op --json
  call "$name.live" live "$path" --at-ms 1 --json
  call "$name.whatif.mb2" whatif "$path" --micro-batch 2 --json
  call "$name.whatif.off" whatif "$path" --offload-optimizer --json
  call "$name.whatif.zero" whatif "$path" --zero 2 --ranks 8 --json
  call "$name.components" components "$path" --json
  call "$name.curve" curve "$path" --json
  local ranks r i=0
  mapfile -t ranks < <("$bin" inspect "$path" --json 2>/dev/null |
    python3 -c 'import json,sys; [print(r["rank"]) for r in json.load(sys.stdin)["ranks"]]' 2>/dev/null)
  for r in "${ranks[@]}"; do
    i=$((i + 1))
    call "$name.explain.r$i" explain "$path" --rank="$r" --json
    call "$name.roles.r$i" roles "$path" --rank="$r" --json
  done
}

f=fixtures
profile demo "$f/demo"
profile torch_cluster "$f/torch_cluster"
profile mindspore "$f/mindspore"
profile msprof "$f/msprof"
profile cnn_adam "$f/pytorch/cnn_adam.pt.trace.json.gz"
profile ddp "$f/pytorch/ddp"
profile gpt_b8 "$f/pytorch/whatif/gpt_b8.pt.trace.json.gz"
profile zero1 "$f/pytorch/whatif/zero1_r0.pt.trace.json.gz"
profile gpu "$f/pytorch/whatif_cuda/gpu.pt.trace.json.gz"
profile offload "$f/pytorch/whatif_cuda/offload.pt.trace.json.gz"
profile transformer "$f/pytorch/roles/transformer_adamw.pt.trace.json.gz"
call whatif.ckpt whatif "$f/pytorch/whatif/gpt_b8.pt.trace.json.gz" --checkpoint Block --json
call compare.demo compare "$f/demo" "$f/torch_cluster" --json
call compare.gpt compare "$f/pytorch/whatif/gpt_b8.pt.trace.json.gz" "$f/pytorch/whatif/gpt_b16.pt.trace.json.gz" --json
for s in cuda_join/run cuda_join/fx cuda_compiled/compiled fx_pinned/fx_pinned; do
  n=${s//\//.}
  call "snapshot.$n" snapshot "$f/snapshots/$s.pickle" --json
  call "explain.$n" explain "$f/snapshots/$s.pickle" --json
done
call snapshot.join snapshot "$f/snapshots/cuda_join/run.pickle" --profile "$f/snapshots/cuda_join/run.pt.trace.json.gz" --json
call compare.snap compare "$f/snapshots/cuda_join/run.pickle" "$f/snapshots/cuda_join/fx.pickle" --json

if [ -n "${MEMSIGHT_SAMPLES:-}" ] && [ -d "${MEMSIGHT_SAMPLES:-}" ]; then
  s=$MEMSIGHT_SAMPLES
  for t in "$s"/cuda_h100/whatif/*.pt.trace.json.gz; do
    [ -e "$t" ] && profile "h100.$(basename "$t" .pt.trace.json.gz)" "$t"
  done
  a=$s/xiaobingling93-pixel_Ascend-msinsight/test/data/pytorch
  for d in "$a"/text/level0 "$a"/text/level1 "$a"/text/level2 "$a"/db/level0 "$a"/db/level2; do
    [ -d "$d" ] && profile "ascend.${d#"$a"/}" "$d"
  done
  for p in "$s"/cuda_h100/oom/*/*.pickle "$s"/cuda_h100/snap/*.pickle; do
    [ -e "$p" ] || continue
    n=${p#"$s"/cuda_h100/}
    call "snapshot.${n//\//.}" snapshot "$p" --json
    call "explain.${n//\//.}" explain "$p" --json
  done
fi
