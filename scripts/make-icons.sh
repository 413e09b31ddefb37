#!/usr/bin/env bash
# Exports assets/memsight.svg to the PNG sizes desktops use and to the Windows .ico.
# Needs rsvg-convert (librsvg2-bin) and ImageMagick. The outputs are committed; run this after
# changing the SVG.
set -euo pipefail
cd "$(dirname "$0")/../assets"
sizes=(16 24 32 48 64 128 256)
for s in "${sizes[@]}"; do
  rsvg-convert -w "$s" -h "$s" memsight.svg -o "icons/memsight-$s.png"
done
convert icons/memsight-{16,24,32,48,64,128,256}.png memsight.ico
echo "wrote assets/icons/*.png and assets/memsight.ico"
