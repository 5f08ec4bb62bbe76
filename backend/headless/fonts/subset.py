#!/usr/bin/env python3
"""Regenerates the fallback fonts of the headless desktop.

The desktop draws text with the Go fonts, which cover Latin, Greek and
Cyrillic. Characters they lack come from two subsets made here:

- DejaVuSans-Symbols.ttf and DejaVuSans-Bold-Symbols.ttf: DejaVu Sans
  (Bitstream Vera licence, see LICENSE-DejaVu.txt) cut to the symbols the Go
  fonts lack: arrows, check marks, dingbats, shapes, maths, box drawing,
  extended Latin.
- NotoSansCJK-Subset.otf: Noto Sans CJK JP Regular (SIL OFL 1.1, see
  LICENSE-NotoSansCJK.txt) cut to the common CJK characters: kana, CJK
  punctuation, full-width forms, the level-1 ideographs of GB 2312 (3,755
  hanzi) and JIS X 0208 (2,965 kanji), the 2,350 Hangul syllables of
  KS X 1001, and the symbols it has.

Run it on Debian with fonts-dejavu-core, fonts-noto-cjk and
python3-fonttools installed:

    /usr/bin/python3 backend/headless/fonts/subset.py
"""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
debian = "/usr/share/fonts"
symbols = [(0x0100, 0x024F), (0x1E00, 0x1EFF), (0x2000, 0x20CF), (0x2100, 0x23FF),
           (0x2460, 0x27BF), (0x27F0, 0x27FF), (0x2B00, 0x2BFF)]


def cmap(path):
    from fontTools.ttLib import TTFont
    return set(TTFont(path, fontNumber=0).getBestCmap())


def go_runes():
    mod = subprocess.run(["go", "list", "-m", "-f", "{{.Dir}}", "golang.org/x/image"], check=True,
                         capture_output=True, text=True, cwd=here).stdout.strip()
    ttfs = os.path.join(mod, "font", "gofont", "ttfs")
    return cmap(os.path.join(ttfs, "Go-Regular.ttf")) & cmap(os.path.join(ttfs, "Go-Bold.ttf"))


def cjk_runes():
    cs = set()
    for a, b in [(0x3000, 0x30FF), (0x3130, 0x318F), (0x31F0, 0x31FF), (0xFF00, 0xFFEF)] + symbols:
        cs.update(range(a, b + 1))
    for codec, first, last in [("gb2312", 0xB0, 0xD7), ("euc_jp", 0xB0, 0xCF), ("euc_kr", 0xB0, 0xC8)]:
        for hi in range(first, last + 1):
            for lo in range(0xA1, 0xFF):
                try:
                    cs.update(map(ord, bytes([hi, lo]).decode(codec)))
                except UnicodeDecodeError:
                    pass
    return cs


def subset(src, runes, dst, number=0):
    with open(os.path.join(here, "runes.tmp"), "w") as f:
        f.write(",".join("U+%04X" % r for r in sorted(runes)))
    subprocess.run([sys.executable, "-m", "fontTools.subset", src, "--font-number=%d" % number,
                    "--unicodes-file=" + f.name, "--output-file=" + os.path.join(here, dst),
                    "--layout-features=", "--no-hinting", "--name-IDs=*"], check=True)
    os.remove(f.name)


def main():
    have = go_runes()
    want = set()
    for a, b in symbols:
        want.update(range(a, b + 1))
    regular = os.path.join(debian, "truetype/dejavu/DejaVuSans.ttf")
    bold = os.path.join(debian, "truetype/dejavu/DejaVuSans-Bold.ttf")
    sym = (want & cmap(regular) & cmap(bold)) - have
    subset(regular, sym, "DejaVuSans-Symbols.ttf")
    subset(bold, sym, "DejaVuSans-Bold-Symbols.ttf")
    subset(os.path.join(debian, "opentype/noto/NotoSansCJK-Regular.ttc"),
           {r for r in cjk_runes() if r > 0x7F}, "NotoSansCJK-Subset.otf", number=0)


if __name__ == "__main__":
    main()
