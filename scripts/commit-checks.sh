#!/usr/bin/env bash
# What every commit's CI proves about packaging, built from what `cargo test --release` has
# already compiled (run it after that command):
# 1. the x86_64 wheel of the binary the test build made (scripts/wheel-from-build.py: maturin's
#    layout, nothing compiled again), installed into a fresh venv with pandas: `memsight
#    --version`, `python -m memsight`, and the Python API's suite against the installed command;
# 2. the headless aarch64 CLI (--no-default-features, Debian's cross gcc) under qemu: every
#    CLI output byte-identical to the x86_64 build's (scripts/cross-check.sh), and the API's
#    suite through it;
# 3. the Windows build compiles (cargo check for x86_64-pc-windows-gnu, the GUI included).
# The release set (manylinux2014 wheels linked by zig, .debs, the .exe under wine, the server
# checks, the crate install) is scripts/release.sh, run when its inputs change.
# Needs: scripts/install-deps.sh --ci. Each step says how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
last=$SECONDS
took() {
  echo "commit-checks.sh: $1 took $((SECONDS - last)) s ($((SECONDS - started)) s in all)"
  last=$SECONDS
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
linux_arm=aarch64-unknown-linux-gnu
windows=x86_64-pc-windows-gnu

# 1. The x86_64 wheel of the test build's binary.
test -x target/release/memsight || { echo "run cargo test --release first" >&2; exit 1; }
wheel=$(python3 scripts/wheel-from-build.py target/release/memsight "$work/wheel")
took "the x86_64 wheel ($(basename "$wheel"))"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$wheel" pandas
"$work/venv/bin/memsight" --version
"$work/venv/bin/python" -m memsight --version
"$work/venv/bin/memsight" inspect fixtures/torch_cluster >/dev/null
(cd "$work" && MEMSIGHT_REPO="$OLDPWD" "$work/venv/bin/python" -m unittest discover -s "$OLDPWD/python/tests")
took "the wheel in a fresh venv (pip, pandas, the API's suite)"

# 2. The headless aarch64 CLI under qemu.
CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
  CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc \
  cargo build --release --locked --no-default-features --target $linux_arm
arm_bin=target/$linux_arm/release/memsight
file "$arm_bin" | grep -q "ARM aarch64" || { echo "not an aarch64 ELF: $arm_bin" >&2; exit 1; }
took "the headless aarch64 CLI"
printf '#!/bin/sh\nexec qemu-aarch64 -L /usr/aarch64-linux-gnu "%s" "$@"\n' "$(realpath "$arm_bin")" >"$work/memsight-arm"
chmod +x "$work/memsight-arm"
bash scripts/cross-check.sh aarch64 target/release/memsight "$arm_bin"
(cd "$work" && MEMSIGHT_REPO="$OLDPWD" MEMSIGHT_BIN="$work/memsight-arm" \
  "$work/venv/bin/python" -m unittest discover -s "$OLDPWD/python/tests")
took "the aarch64 checks under qemu"

# 3. The Windows build compiles (mingw compiles SQLite for it).
cargo check --release --locked --target $windows
took "the Windows compile check"
