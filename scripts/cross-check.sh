#!/usr/bin/env bash
# Runs another platform's build of the CLI on the fixtures (and the real samples, when
# MEMSIGHT_SAMPLES is set) and checks that every output is byte-identical to the Linux x86_64
# build's (file paths aside: on Windows they are normalised to one form).
# Usage: scripts/cross-check.sh windows LINUX_BIN WINDOWS_EXE   (run under wine)
#        scripts/cross-check.sh aarch64 LINUX_BIN AARCH64_BIN   (run under qemu-aarch64)
# Needs scripts/install-deps.sh --ci (qemu-user and the arm64 libc), --release for windows (wine64).
# Debian 12's wine 8 has no bcryptprimitives.dll, from which Rust's standard library takes random
# numbers (ProcessPrng): a test-only stand-in (scripts/wine/bcryptprimitives.c) is built and put
# beside the .exe.
set -euo pipefail
cd "$(dirname "$0")/.."
platform=$1
linux=$(realpath "$2")
other=$(realpath "$3")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
case "$platform" in
  windows)
    cp "$other" "$work/memsight.exe"
    x86_64-w64-mingw32-gcc -shared -O2 -o "$work/bcryptprimitives.dll" scripts/wine/bcryptprimitives.c
    export WINEPREFIX="$work/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
    # Debian's wine64 package installs the loader only under /usr/lib/wine (the `wine` wrapper
    # is another package).
    wine=$(command -v wine || command -v wine64 || echo /usr/lib/wine/wine64)
    "$wine" wineboot --init >/dev/null 2>&1 || true
    run_other() { (cd "$work" && "$wine" ./memsight.exe "$@"); }
    # Paths (Z:\…\ on Windows) become the Linux form; memsight writes \n on every platform.
    norm() { sed -e 's#Z:\\\\#/#g; s#Z:\\#/#g; s#\\\\#/#g; s#\\#/#g'; }
    ;;
  aarch64)
    # Only the arm64 C library (Debian's libc6-arm64-cross): what a bare server has.
    run_other() { qemu-aarch64 -L /usr/aarch64-linux-gnu "$other" "$@"; }
    norm() { cat; }
    ;;
  *)
    echo "usage: $0 windows|aarch64 LINUX_BIN OTHER_BIN" >&2
    exit 2
    ;;
esac
# The fixtures, also under a Chinese folder name (Windows paths are UTF-16 underneath).
data="$work/性能数据"
mkdir -p "$data"
cp -r fixtures/torch_cluster fixtures/mindspore fixtures/msprof "$data/"
cp -r fixtures/demo/node0_4000_20261121000000000_ascend_pt "$data/demo_rank"
cp fixtures/pytorch/roles/cnn_adam.pt.trace.json.gz "$data/"
# A DB export with call stacks (SQLite opens it through a URI: drive letter, Chinese bytes).
"$linux" generate "$data/db export" --db only --stacks --steps 3 --allocs 400 >/dev/null
fail=0
check() {
  local name=$1
  shift
  "$linux" "$@" 2>"$work/linux.err" | norm >"$work/linux.out" || true
  run_other "$@" 2>"$work/other.err" | norm >"$work/other.out" || true
  if cmp -s "$work/linux.out" "$work/other.out" && [ -s "$work/other.out" ]; then
    echo "same  $name ($(wc -c <"$work/other.out") bytes)"
  else
    echo "DIFF  $name"
    diff <(head -c 3000 "$work/linux.out") <(head -c 3000 "$work/other.out") | head -20 || true
    head -5 "$work/other.err"
    fail=1
  fi
}
check "inspect --json (3 formats, Chinese path)" inspect "$data" --json
check "inspect text" inspect "$data/torch_cluster"
check "curve" curve "$data/torch_cluster" --rank 1 --width 300
check "curve --json, stream" curve "$data/torch_cluster" --group-by stream --json --width 200
check "table" table "$data/torch_cluster" --sort "Size(KB):desc" --all
check "table window" table "$data/mindspore" --from-ms 1 --to-ms 3 --page-size 50
check "live --json" live "$data/demo_rank" --at-ms 10 --json --top 50
check "steps --json" steps "$data/demo_rank" --json
check "stacks --json" stacks "$data/demo_rank" --by line --json
check "inspect --json, DB" inspect "$data/db export" --json
check "stacks, DB" stacks "$data/db export" --by op
check "roles --json, PyTorch trace (gzip)" roles "$data/cnn_adam.pt.trace.json.gz" --json
check "compare --json" compare "$data/torch_cluster" "$data/demo_rank" --json
check "version" --version
# The real exports (msprof DBs, trace_view.json, msMemScope dumps, allocator snapshots).
if [ -n "${MEMSIGHT_SAMPLES:-}" ] && [ -d "$MEMSIGHT_SAMPLES" ]; then
  check "inspect --json, the real samples" inspect "$MEMSIGHT_SAMPLES" --json
  while IFS= read -r pkl; do
    check "snapshot --json $(basename "$pkl")" snapshot "$pkl" --json
  done < <(find "$MEMSIGHT_SAMPLES" -name '*.pkl' | sort)
fi
if [ "$fail" != 0 ]; then
  echo "the $platform build's output differs from the Linux x86_64 build's" >&2
  exit 1
fi
echo "cross-check ($platform): every output identical"
