#!/usr/bin/env bash
# The release set: builds what ships, into dist/, each target once, and checks every artifact
# the way a user would meet it. `.ci/run` runs it only when an input it builds from changed
# since the last run that passed it (scripts/release-stamp.sh; the stamp is .ci/release.stamp,
# which this script writes when it passes: commit it), and for every version bump (the version
# is in Cargo.toml, one of the inputs). Every commit gets the lighter scripts/commit-checks.sh.
# - the wheels (maturin, `bindings = "bin"`): Linux x86_64 and aarch64 linked by zig against
#   glibc 2.17 (manylinux2014: CentOS 7 / EulerOS / openEuler Kunpeng servers and newer), and
#   Windows x86_64 (mingw). Their binaries are also the plain downloads, the .debs' and the .exe;
# - the x86_64 wheel installs into a fresh venv: `memsight --version`, `memsight inspect`, and the
#   Python API's suite (python/tests, with pandas);
# - the Linux binaries run their CLI with only the C library (scripts/server-check.sh: a chroot,
#   and qemu-aarch64 with a bare arm64 root);
# - the aarch64 and Windows binaries give byte-identical outputs to the x86_64 one
#   (scripts/cross-check.sh, under qemu-aarch64 and wine), and the API's suite passes on the
#   aarch64 binary too;
# - the .debs (amd64 and arm64) hold their files and run; with root and MEMSIGHT_DPKG_INSTALL=1
#   the amd64 one is installed for real (dpkg -i), then removed;
# - the crate: `cargo package` passes and the packaged crate installs with `cargo install --path`
#   in an empty CARGO_HOME, for aarch64 with Debian's gcc (scripts/crate-check.sh, in the
#   background while the wheels' single-threaded LTO links run): that install is the headless
#   CLI (--no-default-features) whose outputs under qemu must equal x86_64's.
# Each step says how long it took. Needs: scripts/install-deps.sh --release.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(cargo metadata --no-deps --format-version 1 |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["packages"][0]["version"])')
mkdir -p dist
rm -f dist/*.whl
started=$SECONDS
last=$SECONDS
took() {
  echo "release.sh: $1 took $((SECONDS - last)) s ($((SECONDS - started)) s in all)"
  last=$SECONDS
}
linux_x86=x86_64-unknown-linux-gnu
linux_arm=aarch64-unknown-linux-gnu
windows=x86_64-pc-windows-gnu

# In the background, in target dirs of their own (so that cargo's lock on target/ does not make
# them wait): the Windows wheel and the crate check, whose install is the headless aarch64 CLI.
# Each wheel's fat-LTO link runs on one core for minutes; these fill the other.
bg_log=$(mktemp -d)
work=$(mktemp -d)
# On any failure: stop what still runs in the background, remove the scratch folders.
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$bg_log" "$work"' EXIT
# The crate, installed from crates.io into an empty CARGO_HOME as the headless CLI for aarch64,
# with Debian's cross gcc (no zig): what a login node builds.
headless_arm="$work/memsight-headless-aarch64"
CRATE_CHECK_TRIPLE=$linux_arm CRATE_CHECK_KEEP="$headless_arm" bash scripts/crate-check.sh \
  >"$bg_log/crate.log" 2>&1 &
crate_pid=$!
# The Windows wheel (mingw; the icon and version information of the .exe come from build.rs).
CARGO_TARGET_DIR=target/windows-wheel python3 -m maturin build --target $windows --out dist \
  >"$bg_log/windows.log" 2>&1 &
windows_pid=$!
wait_for() {
  local pid=$1 log=$2 what=$3
  if wait "$pid"; then
    tail -n 3 "$log"
  else
    cat "$log"
    echo "release.sh: $what failed" >&2
    exit 1
  fi
}

# 1. The wheels.
python3 -m maturin build --zig --target $linux_x86 --compatibility manylinux2014 --out dist
took "the x86_64 Linux wheel"
python3 -m maturin build --zig --target $linux_arm --compatibility manylinux2014 --out dist
took "the aarch64 Linux wheel"
wait_for $windows_pid "$bg_log/windows.log" "the Windows wheel"
took "waiting for the Windows wheel"
cp target/$linux_x86/dist/memsight "dist/memsight-$version-x86_64-linux"
cp target/$linux_arm/dist/memsight "dist/memsight-$version-aarch64-linux"
cp target/windows-wheel/$windows/dist/memsight.exe "dist/memsight-$version-x86_64-windows.exe"
wheel_x86=$(ls dist/memsight-"$version"-*manylinux*_x86_64.whl)
wheel_arm=$(ls dist/memsight-"$version"-*manylinux*_aarch64.whl)
wheel_win=$(ls dist/memsight-"$version"-*win_amd64.whl)
file "dist/memsight-$version-aarch64-linux" | grep -q "ARM aarch64" ||
  { echo "the aarch64 binary is not an aarch64 ELF" >&2; exit 1; }

# 2. The crate check, whose install is the headless CLI for aarch64 (started above).
wait_for $crate_pid "$bg_log/crate.log" "the crate check"
took "waiting for the crate check (the headless aarch64 CLI)"

# 3. The .debs, from the wheels' binaries (dpkg-deb, with Cargo.toml's [package.metadata.deb]).
python3 scripts/make-deb.py amd64 target/$linux_x86/dist/memsight "dist/memsight_${version}_amd64.deb"
python3 scripts/make-deb.py arm64 target/$linux_arm/dist/memsight "dist/memsight_${version}_arm64.deb"
took "the .debs"

# 4. The x86_64 wheel in a fresh venv: the command, `python -m memsight`, and the API's suite.
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$wheel_x86" pandas
"$work/venv/bin/memsight" --version
"$work/venv/bin/python" -m memsight --version
"$work/venv/bin/memsight" inspect fixtures/torch_cluster >/dev/null
(cd "$work" && MEMSIGHT_REPO="$OLDPWD" "$work/venv/bin/python" -m unittest discover -s "$OLDPWD/python/tests")
took "the x86_64 wheel in a fresh venv (pip, pandas, the API's suite)"

# 5. The aarch64 wheel's binary under qemu: the same suite through it, then every output equal
# to x86_64's, and the headless build's too.
mkdir -p "$work/arm"
python3 -m zipfile -e "$wheel_arm" "$work/arm"
arm_bin="$work/arm/memsight-$version.data/scripts/memsight"
chmod +x "$arm_bin"
printf '#!/bin/sh\nexec qemu-aarch64 -L /usr/aarch64-linux-gnu "%s" "$@"\n' "$arm_bin" >"$work/memsight-arm"
chmod +x "$work/memsight-arm"
(cd "$work" && MEMSIGHT_REPO="$OLDPWD" MEMSIGHT_BIN="$work/memsight-arm" \
  "$work/venv/bin/python" -m unittest discover -s "$OLDPWD/python/tests")
bash scripts/cross-check.sh aarch64 "dist/memsight-$version-x86_64-linux" "$arm_bin"
for args in "--version" "inspect fixtures/torch_cluster --json" "steps fixtures/demo --json"; do
  # shellcheck disable=SC2086
  cmp <("dist/memsight-$version-x86_64-linux" $args) <(qemu-aarch64 -L /usr/aarch64-linux-gnu "$headless_arm" $args)
done
echo "the headless aarch64 CLI: identical outputs"
took "the aarch64 checks under qemu"

# 6. Both Linux binaries on a server: only the C library.
bash scripts/server-check.sh x86_64 "dist/memsight-$version-x86_64-linux"
bash scripts/server-check.sh aarch64 "$arm_bin"
took "the server checks"

# 7. The .debs: their files, and the installed binary runs. Unpacked into a scratch root
# (dpkg -x) so that checking needs no root and leaves the machine as it was; with root and
# MEMSIGHT_DPKG_INSTALL=1 the amd64 one is installed for real (dpkg -i), as on a user's machine.
for arch in amd64 arm64; do
  deb="dist/memsight_${version}_$arch.deb"
  test "$(dpkg-deb --field "$deb" Architecture)" = "$arch"
  root="$work/deb-$arch"
  dpkg -x "$deb" "$root"
  for f in usr/bin/memsight usr/share/applications/memsight.desktop \
    usr/share/icons/hicolor/256x256/apps/memsight.png usr/share/icons/hicolor/scalable/apps/memsight.svg; do
    test -f "$root/$f" || { echo "missing from $deb: $f" >&2; exit 1; }
  done
done
dpkg-deb --info "dist/memsight_${version}_amd64.deb" | sed -n '1,20p'
"$work/deb-amd64/usr/bin/memsight" --version
"$work/deb-amd64/usr/bin/memsight" inspect fixtures/torch_crlf >/dev/null
qemu-aarch64 -L /usr/aarch64-linux-gnu "$work/deb-arm64/usr/bin/memsight" inspect fixtures/torch_crlf >/dev/null
if [ "${MEMSIGHT_DPKG_INSTALL:-0}" = 1 ] && [ "$(id -u)" = 0 ]; then
  dpkg -i "dist/memsight_${version}_amd64.deb"
  memsight --version
  dpkg -r memsight
fi
took "the .debs"

# 8. The Windows wheel's .exe: every CLI output equal to the Linux binary's, under wine.
mkdir -p "$work/win"
python3 -m zipfile -e "$wheel_win" "$work/win"
cmp "$work/win/memsight-$version.data/scripts/memsight.exe" "dist/memsight-$version-x86_64-windows.exe"
bash scripts/cross-check.sh windows "dist/memsight-$version-x86_64-linux" "dist/memsight-$version-x86_64-windows.exe"
took "the Windows check under wine"

ls -la dist

# Passed: the stamp says which inputs this release set was built and checked from.
bash scripts/release-stamp.sh >.ci/release.stamp
echo "release.sh: passed; wrote .ci/release.stamp ($(cat .ci/release.stamp)): commit it"
