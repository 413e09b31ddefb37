#!/usr/bin/env bash
# The crate as crates.io would get it: `cargo package` passes, the .crate holds only the crate's
# files and is under the registry's 10 MiB limit, and the packaged crate builds and installs with
# `cargo install --path` in an empty CARGO_HOME (every dependency fetched from crates.io, nothing
# from this checkout or this machine's cargo config), and runs.
#
# With CRATE_CHECK_TRIPLE=aarch64-unknown-linux-gnu (package.sh sets it) the install is a cross
# build with Debian's aarch64 gcc, run under qemu: what a Kunpeng login node builds, from
# crates.io, in the same one build. CRATE_CHECK_KEEP=FILE keeps the installed binary there.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(cargo metadata --no-deps --format-version 1 |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["packages"][0]["version"])')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Everything the build embeds (include_bytes!/include_str!) is in the crate: the install below
# is the headless CLI, which does not compile the GUI's embeds.
list=$(cargo package --list --allow-dirty 2>/dev/null)
grep -rhoE 'include_(bytes|str)!\("[^"]+"\)' src | sed -E 's/.*\("(.*)"\)/\1/' | sort -u | while read -r rel; do
  # Relative to the file that embeds it: resolve against every source folder that names it.
  found=$(grep -rlF "\"$rel\"" src | head -1)
  path=$(realpath --relative-to=. "$(dirname "$found")/$rel")
  grep -qxF "$path" <<<"$list" || { echo "crate-check: $path ($found embeds it) is not in the crate" >&2; exit 1; }
  echo "embedded, in the crate: $path"
done
# `cargo package` (the manifest and the file list; --no-verify: its verification build is the
# `cargo install` of the unpacked crate below, which builds exactly the packaged sources, in
# release, from an empty CARGO_HOME), in a target dir of its own so that it can run beside the
# wheels' builds. --allow-dirty: a local run with uncommitted work; CI packages a clean clone.
target=$work/package-target
CARGO_TARGET_DIR=$target cargo package --allow-dirty --locked --no-verify
crate="$target/package/memsight-$version.crate"
size=$(stat -c %s "$crate")
echo "$crate: $size bytes, $(tar -tzf "$crate" | wc -l) files"
if [ "$size" -ge $((10 * 1024 * 1024)) ]; then
  echo "crate-check: $crate is over crates.io's 10 MiB limit" >&2
  exit 1
fi
if tar -tzf "$crate" | grep -E '/(fixtures|tests|benches|fuzz|docs|python|scripts)/'; then
  echo "crate-check: the crate ships test data or scripts (above)" >&2
  exit 1
fi
tar -xzf "$crate" -C "$work"
# An empty CARGO_HOME; the build goes to its own target dir (a user's `cargo install` shares
# nothing with this checkout). The headless CLI, as on a login node; the GUI half of the code is
# built by every other step of CI from the same sources the crate holds. `"${run[@]}"` is
# empty for a native install (bash ≥ 4.4 expands an empty array under `set -u`).
triple=${CRATE_CHECK_TRIPLE:-}
run=()
install=(cargo install --locked --path "$work/memsight-$version" --root "$work/root" --no-default-features)
if [ -n "$triple" ]; then
  install+=(--target "$triple")
  case "$triple" in
    aarch64-unknown-linux-gnu)
      export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
      export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
      run=(qemu-aarch64 -L /usr/aarch64-linux-gnu) ;;
    *) echo "crate-check: no cross setup for $triple" >&2; exit 1 ;;
  esac
fi
CARGO_HOME="$work/cargo-home" CARGO_TARGET_DIR="$work/target" "${install[@]}"
"${run[@]}" "$work/root/bin/memsight" --version
"${run[@]}" "$work/root/bin/memsight" inspect fixtures/torch_cluster --json >/dev/null
if [ -n "${CRATE_CHECK_KEEP:-}" ]; then
  cp "$work/root/bin/memsight" "$CRATE_CHECK_KEEP"
fi
echo "crate-check: the packaged crate installs and runs${triple:+ ($triple)}"
