#!/usr/bin/env bash
# System packages the build and the tests need, installed when missing (Debian/Ubuntu).
# - build: a C toolchain only (SQLite is compiled in by rusqlite's `bundled`; eframe and rfd
#   load X11/Wayland/GL/D-Bus libraries at run time, no -dev packages needed);
# - UI snapshot tests (`cargo test --release --test snapshots -- --ignored`): Mesa's software Vulkan (lavapipe);
# - the Chinese UI: a CJK font (fonts-wqy-microhei);
# - screenshots (scripts/screenshot.sh): Xvfb, ImageMagick and xdotool (pass --screenshots);
# - packages (scripts/package.sh, pass --package): maturin and zig (PyPI: the wheels, glibc 2.17),
#   mingw-w64 and the Rust Windows target for the .exe, wine64 to run it, the Rust aarch64 target,
#   Debian's aarch64 gcc (the headless CLI) and qemu-user with the arm64 libc to run it,
#   cargo-deb for the .debs.
set -euo pipefail
need=()
have_pkg() { dpkg -s "$1" >/dev/null 2>&1; }
command -v cc >/dev/null 2>&1 || need+=(build-essential)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
for p in mesa-vulkan-drivers libvulkan1; do have_pkg "$p" || need+=("$p"); done
# A CJK font: the Chinese UI and Chinese paths in the tests and screenshots (the app uses the
# system's; WenQuanYi Micro Hei is the smallest Debian package with one, 5 MB).
have_pkg fonts-wqy-microhei || need+=(fonts-wqy-microhei)
for arg in "$@"; do
  case "$arg" in
    --screenshots)
      for p in xvfb xauth imagemagick xdotool; do have_pkg "$p" || need+=("$p"); done ;;
    --package)
      for p in gcc-mingw-w64-x86-64 wine64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user file; do
        have_pkg "$p" || need+=("$p")
      done ;;
  esac
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
if [[ " $* " == *" --package "* ]]; then
  for t in x86_64-pc-windows-gnu aarch64-unknown-linux-gnu; do
    rustup target list --installed | grep -qx "$t" || rustup target add "$t"
  done
  command -v cargo-deb >/dev/null 2>&1 || cargo install cargo-deb --locked --quiet
  # Pinned: the wheels' tags and layout are checked by scripts/package.sh.
  python3 -m pip install --quiet --disable-pip-version-check maturin==1.16.0 ziglang==0.17.1
fi
