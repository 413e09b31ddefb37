#!/usr/bin/env bash
# Starts the real app under Xvfb on a profile and saves a screenshot of the window.
# Usage: scripts/screenshot.sh [PATH] [OUT.png] [SECONDS]   (defaults: fixtures/demo, docs/screenshot.png, 6)
# Needs: xvfb xauth imagemagick (Debian: apt-get install xvfb xauth imagemagick).
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-fixtures/demo}
out=${2:-docs/screenshot.png}
secs=${3:-6}
mkdir -p "$(dirname "$out")"
cargo build --release --quiet
xvfb-run -a -s "-screen 0 1400x900x24" bash -c "
  ./target/release/memsight '$profile' & pid=\$!
  sleep $secs
  /usr/bin/import -window root '$out'
  kill \$pid; wait \$pid 2>/dev/null || true
"
echo "saved $out"
