#!/usr/bin/env python3
"""Builds memsight's .deb from a built binary with dpkg-deb, reading what goes in from
Cargo.toml's [package.metadata.deb] (the fields cargo-deb reads), so that packaging needs no
cargo-deb compiled from source (3 of CI's minutes).

    python3 scripts/make-deb.py ARCH BINARY OUT.deb      # ARCH: amd64 or arm64
"""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def control(pkg: dict, meta: dict, arch: str, installed_kib: int) -> str:
    extended = " ".join(meta["extended-description"].split())
    fields = [
        ("Package", pkg["name"]),
        ("Version", pkg["version"]),
        ("Architecture", arch),
        ("Maintainer", meta["maintainer"]),
        ("Installed-Size", str(installed_kib)),
        ("Depends", meta["depends"]),
        ("Recommends", meta["recommends"]),
        ("Section", meta["section"]),
        ("Priority", meta["priority"]),
        ("Homepage", pkg.get("repository", pkg.get("documentation", ""))),
        ("Description", f"{pkg['description']}\n {extended}"),
    ]
    return "".join(f"{k}: {v}\n" for k, v in fields if v)


def main() -> int:
    if len(sys.argv) != 4 or sys.argv[1] not in ("amd64", "arm64"):
        print(__doc__, file=sys.stderr)
        return 2
    arch, binary, out = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    manifest = tomllib.loads((ROOT / "Cargo.toml").read_text(encoding="utf-8"))
    pkg = manifest["package"]
    meta = pkg["metadata"]["deb"]
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp) / "root"
        size = 0
        for src, dest, mode in meta["assets"]:
            # cargo-deb's convention: the first asset names target/release/<bin>.
            source = binary if src.startswith("target/release/") else ROOT / src
            target = root / dest
            if dest.endswith("/"):
                target = target / pathlib.Path(src).name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            os.chmod(target, int(mode, 8))
            size += target.stat().st_size
        debian = root / "DEBIAN"
        debian.mkdir()
        (debian / "control").write_text(
            control(pkg, meta, arch, (size + 1023) // 1024), encoding="utf-8"
        )
        for d in sorted(p for p in root.rglob("*") if p.is_dir()):
            os.chmod(d, 0o755)
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["dpkg-deb", "--root-owner-group", "-Zxz", "--build", str(root), str(out)],
            check=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
