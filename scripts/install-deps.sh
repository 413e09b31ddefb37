#!/usr/bin/env bash
# System packages the build and the tests need, installed when missing (Debian/Ubuntu).
# - build: a C toolchain only (SQLite is compiled in by rusqlite's `bundled`; eframe and rfd
#   load X11/Wayland/GL/D-Bus libraries at run time, no -dev packages needed);
# - UI snapshot tests (`cargo test --release --test snapshots -- --ignored`): Mesa's software Vulkan (lavapipe);
# - no fonts: the app bundles the glyphs its UI draws (assets/fonts/);
# - screenshots (scripts/screenshot.sh): Xvfb, ImageMagick and xdotool (pass --screenshots);
# - every commit's packaging checks (scripts/commit-checks.sh, pass --ci): wheel and mcp (PyPI), the
#   Rust aarch64 and Windows targets, Debian's aarch64 gcc and qemu-user with the arm64 libc (the
#   headless CLI, run), mingw-w64 (SQLite compiled for the Windows check);
# - the release set (scripts/release.sh, pass --release; implies --ci): maturin and zig (PyPI:
#   the wheels, glibc 2.17), wine64 to run the .exe; the .debs are built with dpkg-deb.
set -euo pipefail
need=()
have_pkg() { dpkg -s "$1" >/dev/null 2>&1; }
command -v cc >/dev/null 2>&1 || need+=(build-essential)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
for p in mesa-vulkan-drivers libvulkan1; do have_pkg "$p" || need+=("$p"); done
for arg in "$@"; do
  case "$arg" in
    --screenshots)
      for p in xvfb xauth imagemagick xdotool; do have_pkg "$p" || need+=("$p"); done ;;
    --ci|--release)
      for p in gcc-mingw-w64-x86-64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user file python3-venv; do
        have_pkg "$p" || need+=("$p")
      done
      if [ "$arg" = --release ]; then have_pkg wine64 || need+=(wine64); fi ;;
  esac
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
if [[ " $* " == *" --ci "* || " $* " == *" --release "* ]]; then
  for t in x86_64-pc-windows-gnu aarch64-unknown-linux-gnu; do
    rustup target list --installed | grep -qx "$t" || rustup target add "$t"
  done
  # Packs every commit's wheel (scripts/wheel-from-build.py); `mcp` is the real MCP client
  # that tests/cli/cli_mcp.rs drives `memsight mcp` with (tests/reference/mcp_session.py).
  python3 -m pip install --quiet --disable-pip-version-check wheel==0.45.1 mcp==2.3.0
fi
if [[ " $* " == *" --release "* ]]; then
  # Pinned: the wheels' tags and layout are checked by scripts/release.sh.
  python3 -m pip install --quiet --disable-pip-version-check maturin==1.16.0 ziglang==0.17.1
fi
