#!/usr/bin/env bash
# Starts the real app under Xvfb on a profile and saves a screenshot of the screen.
# Usage: scripts/screenshot.sh [PATH] [OUT.png] [SECONDS]   (defaults: fixtures/demo, docs/screenshot.png, 6)
# Environment: SIZE=WxH (screen, default 1400x900; the window is resized to fill it),
#   SCALE=2 (HiDPI: 2 pixels per point), LANG=zh_CN.UTF-8 (the Chinese UI), MEMSIGHT_CJK_FONT,
#   CLICK="X Y" (a click at that screen point before the shot, e.g. on the chart: Live at cursor;
#   several clicks in order: CLICK="X1 Y1;X2 Y2").
# Needs: xvfb xauth imagemagick xdotool (scripts/install-deps.sh --screenshots).
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-fixtures/demo}
out=${2:-docs/screenshot.png}
secs=${3:-6}
size=${SIZE:-1400x900}
mkdir -p "$(dirname "$out")"
cargo build --release --quiet
export WINIT_X11_SCALE_FACTOR="${SCALE:-1}"
# A fresh settings folder, so a remembered language or theme does not leak in.
XDG_DATA_HOME=$(mktemp -d)
export XDG_DATA_HOME
xvfb-run -a -s "-screen 0 ${size}x24" bash -c "
  ./target/release/memsight '$profile' & pid=\$!
  sleep 2
  if command -v xdotool >/dev/null; then
    w=\$(xdotool search --sync --name memsight | head -1)
    xdotool windowmove \$w 0 0 windowsize \$w ${size%x*} ${size#*x} || true
  fi
  sleep $secs
  for c in $(echo "${CLICK:-}" | tr ' ;' ', '); do
    xdotool mousemove \${c%,*} \${c#*,} click 1; sleep 1
  done
  /usr/bin/import -window root '$out'
  kill \$pid; wait \$pid 2>/dev/null || true
"
echo "saved $out"
