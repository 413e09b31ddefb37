#!/usr/bin/env bash
# System packages the build and the tests need, installed when missing (Debian/Ubuntu).
# - build: a C toolchain only (SQLite is compiled in by rusqlite's `bundled`; eframe and rfd
#   load X11/Wayland/GL/D-Bus libraries at run time, no -dev packages needed);
# - UI snapshot tests (`--features snapshot`): Mesa's software Vulkan (lavapipe);
# - the Chinese UI: a CJK font (fonts-wqy-microhei);
# - screenshots (scripts/screenshot.sh): Xvfb, ImageMagick and xdotool (pass --screenshots).
set -euo pipefail
need=()
have_pkg() { dpkg -s "$1" >/dev/null 2>&1; }
command -v cc >/dev/null 2>&1 || need+=(build-essential)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
for p in mesa-vulkan-drivers libvulkan1; do have_pkg "$p" || need+=("$p"); done
# A CJK font: the Chinese UI and Chinese paths in the tests and screenshots (the app uses the
# system's; WenQuanYi Micro Hei is the smallest Debian package with one, 5 MB).
have_pkg fonts-wqy-microhei || need+=(fonts-wqy-microhei)
if [ "${1:-}" = "--screenshots" ]; then
  for p in xvfb xauth imagemagick xdotool; do have_pkg "$p" || need+=("$p"); done
fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
