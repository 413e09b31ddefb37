#!/usr/bin/env bash
# Runs the Windows build of the CLI under wine on the fixtures and checks that every output is
# byte-identical to the Linux build's (file paths aside: they are normalised to one form).
# Usage: scripts/windows-check.sh LINUX_BIN WINDOWS_EXE
# Needs wine64 and mingw (scripts/install-deps.sh --windows). Debian 12's wine 8 has no
# bcryptprimitives.dll, from which Rust's standard library takes random numbers (ProcessPrng):
# a test-only stand-in (scripts/wine/bcryptprimitives.c) is built and put beside the .exe.
set -euo pipefail
cd "$(dirname "$0")/.."
linux=$(realpath "$1")
exe=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$exe" "$work/memsight.exe"
x86_64-w64-mingw32-gcc -shared -O2 -o "$work/bcryptprimitives.dll" scripts/wine/bcryptprimitives.c
export WINEPREFIX="$work/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
# Debian's wine64 package installs the loader only under /usr/lib/wine (the `wine` wrapper is
# another package).
wine=$(command -v wine || command -v wine64 || echo /usr/lib/wine/wine64)
"$wine" wineboot --init >/dev/null 2>&1 || true
# The fixtures, also under a Chinese folder name (Windows paths are UTF-16 underneath).
data="$work/性能数据"
mkdir -p "$data"
cp -r fixtures/torch_cluster fixtures/mindspore fixtures/msprof "$data/"
cp -r fixtures/demo/node0_4000_20261121000000000_ascend_pt "$data/demo_rank"
# A DB export with call stacks (SQLite opens it through a URI: drive letter, Chinese bytes).
"$linux" generate "$data/db export" --db only --stacks --steps 3 --allocs 400 >/dev/null
# The same output from both: paths (Z:\…\ on Windows) become the Linux form, and the Windows
# newline convention is not used by memsight (it writes \n on every platform).
norm() { sed -e 's#Z:\\\\#/#g; s#Z:\\#/#g; s#\\\\#/#g; s#\\#/#g'; }
fail=0
check() {
  local name=$1
  shift
  "$linux" "$@" >"$work/linux.out" 2>"$work/linux.err" || true
  (cd "$work" && "$wine" ./memsight.exe "$@" 2>"$work/win.err" | norm >"$work/win.out") || true
  norm <"$work/linux.out" >"$work/linux.norm"
  if cmp -s "$work/linux.norm" "$work/win.out" && [ -s "$work/win.out" ]; then
    echo "same  $name ($(wc -c <"$work/win.out") bytes)"
  else
    echo "DIFF  $name"
    diff <(head -c 3000 "$work/linux.norm") <(head -c 3000 "$work/win.out") | head -20 || true
    head -5 "$work/win.err"
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
check "version" --version
if [ "$fail" != 0 ]; then
  echo "the Windows build's output differs from the Linux build's" >&2
  exit 1
fi
echo "windows-check: every output identical"
