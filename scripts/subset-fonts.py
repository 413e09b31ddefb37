#!/usr/bin/env python3
"""Makes the two fonts the app bundles (assets/fonts/), so that its own UI renders on a machine
with no system fonts at all.

- memsight-cjk.otf: Noto Sans CJK SC (SIL OFL 1.1), cut down to the 3,755 common characters of
  GB 2312 level 1 plus every non-ASCII character the source code holds (the Chinese UI, and
  symbols such as ● → ←). Common Chinese in data names (paths, operator names) renders with it
  too when the system has no CJK font.
- memsight-symbols.ttf: DejaVu Sans (Bitstream Vera licence), cut down to the source's non-CJK
  symbols that Noto Sans CJK lacks (▸ today).

Run it after adding a character that `cargo test --release ui_glyphs` reports as uncovered:
    apt-get install fonts-noto-cjk fonts-dejavu-core && pip install fonttools
    python3 scripts/subset-fonts.py
"""

import pathlib
import sys

from fontTools import subset
from fontTools.ttLib import TTCollection, TTFont

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTO = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"
NOTO_SC = 2  # the face index of Noto Sans CJK SC in the collection
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
OUT = ROOT / "assets" / "fonts"


def source_chars() -> set:
    """Every non-ASCII, non-control character written literally in src/ (the code's few \\u{..}
    escapes are range bounds and byte-order marks, never drawn)."""
    chars = set()
    for path in sorted((ROOT / "src").rglob("*.rs")):
        text = path.read_text(encoding="utf-8")
        chars |= {c for c in text if ord(c) > 0x7F}
    return {c for c in chars if c.isprintable() and c != "\ufeff"}


def gb2312_level1() -> set:
    """The 3,755 most common simplified characters (GB 2312 rows 16-55)."""
    out = set()
    for hi in range(0xB0, 0xD8):
        for lo in range(0xA1, 0xFF):
            try:
                out.add(bytes([hi, lo]).decode("gb2312"))
            except UnicodeDecodeError:
                pass
    return out


def cut(src: str, number: int, chars: set, dest: pathlib.Path) -> None:
    opts = subset.Options()
    opts.font_number = number
    opts.layout_features = []
    opts.hinting = False
    opts.name_IDs = ["*"]  # keep the copyright and licence records
    opts.notdef_outline = True
    font = subset.load_font(src, opts)
    sub = subset.Subsetter(opts)
    sub.populate(text="".join(sorted(chars)))
    sub.subset(font)
    subset.save_font(font, str(dest), opts)


def main() -> int:
    want = source_chars()
    noto = TTCollection(NOTO).fonts[NOTO_SC].getBestCmap()
    cjk = {c for c in want | gb2312_level1() if ord(c) in noto}
    rest = {c for c in want if ord(c) not in noto}
    dejavu = TTFont(DEJAVU).getBestCmap()
    missing = {c for c in rest if ord(c) not in dejavu}
    if missing:
        print("no font here has:", " ".join(f"U+{ord(c):04X}" for c in sorted(missing)))
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    cut(NOTO, NOTO_SC, cjk, OUT / "memsight-cjk.otf")
    cut(DEJAVU, 0, rest | {"▸"}, OUT / "memsight-symbols.ttf")
    print(f"memsight-cjk.otf: {len(cjk)} characters; memsight-symbols.ttf: {len(rest)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
