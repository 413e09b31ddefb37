#!/usr/bin/env bash
# Checks that a Linux build of memsight runs its CLI on a server with no display libraries: its
# ELF needs only the C library (no X11, Wayland, OpenGL, xkbcommon: eframe loads those at run
# time, and only for the window), and in a root holding nothing but the binary, those libraries
# and a fixture it gives the same output as on this machine, while plain `memsight` (the window)
# fails with a clear message instead of crashing.
# Usage: scripts/server-check.sh x86_64 BIN    (a chroot; needs root, else `unshare -r`)
#        scripts/server-check.sh aarch64 BIN   (qemu-aarch64 with that root as its prefix)
set -euo pipefail
cd "$(dirname "$0")/.."
arch=$1
bin=$(realpath "$2")
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort)
echo "NEEDED: $(echo $needed)"
for lib in $needed; do
  case "$lib" in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libgcc_s.so.* | ld-linux*) ;;
    *)
      echo "server-check: $bin needs $lib at load time (only the C library is allowed)" >&2
      exit 1
      ;;
  esac
done
interp=$(readelf -l "$bin" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
case "$arch" in
  x86_64)
    for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
      mkdir -p "$root$(dirname "$lib")"
      cp -L "$lib" "$root$lib"
    done
    run_host() { "$bin" "$@"; }
    if [ "$(id -u)" = 0 ]; then
      run_in_root() { env -i LANG=C.UTF-8 ${DISPLAY_ENV:-} "$(command -v chroot)" "$root" "$@"; }
    else
      run_in_root() { env -i LANG=C.UTF-8 ${DISPLAY_ENV:-} unshare -r "$(command -v chroot)" "$root" "$@"; }
    fi
    ;;
  aarch64)
    sysroot=/usr/aarch64-linux-gnu
    mkdir -p "$root/lib"
    cp -L "$sysroot/lib/$(basename "$interp")" "$root/lib/"
    for lib in $needed; do cp -L "$sysroot/lib/$lib" "$root/lib/"; done
    mkdir -p "$root$(dirname "$interp")"
    [ -e "$root$interp" ] || cp -L "$sysroot/lib/$(basename "$interp")" "$root$interp"
    # qemu-user resolves the loader and the libraries in this root first, and the arm64
    # loader finds nothing else on an x86_64 host.
    qemu=$(command -v qemu-aarch64)
    run_host() { "$qemu" -L "$sysroot" "$bin" "$@"; }
    run_in_root() {
      local exe=$1
      shift
      (cd "$root" && env -i LANG=C.UTF-8 ${DISPLAY_ENV:-} "$qemu" -L "$root" "$root$exe" "$@")
    }
    ;;
  *)
    echo "usage: $0 x86_64|aarch64 BIN" >&2
    exit 2
    ;;
esac
mkdir -p "$root/bin" "$root/data"
cp "$bin" "$root/bin/memsight"
cp -r fixtures/torch_crlf "$root/data/"
echo "root: $(cd "$root" && find . -type f -not -path './data/*' | sort | tr '\n' ' ')"

# The CLI gives what it gives with this machine's libraries (relative paths: the root's cwd is
# its /).
run_in_root /bin/memsight --version
(cd "$root" && run_host inspect data/torch_crlf --json) >"$root/host.json"
run_in_root /bin/memsight inspect data/torch_crlf --json >"$root/server.json"
cmp "$root/host.json" "$root/server.json"
echo "inspect --json: identical to this machine's ($(wc -c <"$root/server.json") bytes)"

# The window cannot open there, even with a DISPLAY set (so that it tries to load libX11): exit
# code 2 and a message that points at the CLI, no crash.
code=0
DISPLAY_ENV=DISPLAY=:0 run_in_root /bin/memsight 2>"$root/gui.err" >/dev/null || code=$?
cat "$root/gui.err"
if [ "$code" != 2 ] || ! grep -q "without a display, the CLI works" "$root/gui.err"; then
  echo "server-check: the window without display libraries exited $code" >&2
  exit 1
fi
echo "server-check ($arch): the CLI runs with only the C library"
