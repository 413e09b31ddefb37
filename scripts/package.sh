#!/usr/bin/env bash
# Builds what ships, into dist/: the Linux binary and its .deb, and the Windows .exe; then checks
# them: the .deb installs (dpkg -i into a scratch root, then `memsight --version`), and the .exe
# gives the Linux binary's output on the fixtures under wine (scripts/windows-check.sh).
# Needs: scripts/install-deps.sh --package (mingw, wine, the Windows target, cargo-deb).
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(cargo metadata --no-deps --format-version 1 |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["packages"][0]["version"])')
mkdir -p dist
# Linux: the dist profile (LTO, one codegen unit, stripped).
cargo build --profile dist
cp target/dist/memsight "dist/memsight-$version-x86_64-linux"
cargo deb --no-build --no-strip --output "dist/memsight_${version}_amd64.deb"
# Windows: cross-built with mingw; the icon and version information come from build.rs.
cargo build --profile dist --target x86_64-pc-windows-gnu
cp target/x86_64-pc-windows-gnu/dist/memsight.exe "dist/memsight-$version-x86_64-windows.exe"
ls -la dist

# The .deb: its files, and the installed binary runs. Unpacked into a scratch root (dpkg -x)
# so that checking it needs no root and leaves the machine as it was; with root and
# MEMSIGHT_DPKG_INSTALL=1 it is installed for real (dpkg -i), as on a user's machine.
deb="dist/memsight_${version}_amd64.deb"
dpkg-deb --info "$deb" | sed -n '1,20p'
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg -x "$deb" "$root"
for f in usr/bin/memsight usr/share/applications/memsight.desktop \
  usr/share/icons/hicolor/256x256/apps/memsight.png usr/share/icons/hicolor/scalable/apps/memsight.svg; do
  test -f "$root/$f" || { echo "missing from the .deb: $f" >&2; exit 1; }
done
"$root/usr/bin/memsight" --version
"$root/usr/bin/memsight" inspect fixtures/torch_crlf >/dev/null
if [ "${MEMSIGHT_DPKG_INSTALL:-0}" = 1 ] && [ "$(id -u)" = 0 ]; then
  dpkg -i "$deb"
  memsight --version
  dpkg -r memsight
fi

# The .exe: every CLI output equal to the Linux binary's, under wine.
bash scripts/windows-check.sh "dist/memsight-$version-x86_64-linux" "dist/memsight-$version-x86_64-windows.exe"
