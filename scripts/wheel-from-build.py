#!/usr/bin/env python3
"""Packs the wheel of a binary that is already built: the one `cargo test --release` made
(target/release/memsight), with python/memsight and the metadata pyproject.toml gives maturin,
laid out as maturin's `bindings = "bin"` lays it out (the binary in the wheel's scripts).

Every commit's CI installs this wheel into a fresh venv (scripts/commit-checks.sh): maturin
would compile the GUI stack again, because `cargo test` builds it with the dev-dependencies'
features unified, and a plain build without them (4 of CI's minutes). The release set
(scripts/release.sh) builds the wheels that ship with maturin itself.

    python3 scripts/wheel-from-build.py BINARY OUT_DIR      # prints the wheel's path
"""

import base64
import hashlib
import pathlib
import shutil
import sys
import sysconfig
import tempfile
import zipfile

try:
    import tomllib
except ImportError:  # Python < 3.11: the TOML reader pip itself vendors
    from pip._vendor import tomli as tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def metadata(project: dict, version: str) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {version}",
        f"Summary: {project['description']}",
        f"Requires-Python: {project['requires-python']}",
        f"License: {project['license']['text']}",
        f"Keywords: {','.join(project['keywords'])}",
    ]
    lines += [f"Classifier: {c}" for c in project["classifiers"]]
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f"Requires-Dist: {r} ; extra == '{extra}'" for r in requirements]
    lines.append("Description-Content-Type: text/markdown; charset=UTF-8")
    readme = (ROOT / project["readme"]).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + readme


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    version = tomllib.loads((ROOT / "Cargo.toml").read_text(encoding="utf-8"))["package"]["version"]
    name = project["name"]
    tag = "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp) / f"{name}-{version}"
        shutil.copytree(
            ROOT / "python" / name, root / name, ignore=shutil.ignore_patterns("__pycache__")
        )
        scripts = root / f"{name}-{version}.data" / "scripts"
        scripts.mkdir(parents=True)
        shutil.copy2(binary, scripts / binary.name)
        info = root / f"{name}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(metadata(project, version), encoding="utf-8")
        (info / "WHEEL").write_text(
            "Wheel-Version: 1.0\nGenerator: memsight scripts/wheel-from-build.py\n"
            f"Root-Is-Purelib: false\nTag: {tag}\n",
            encoding="utf-8",
        )
        out.mkdir(parents=True, exist_ok=True)
        wheel = out / f"{name}-{version}-{tag}.whl"
        pack(root, info, wheel)
    print(wheel)
    return 0


def pack(root: pathlib.Path, info: pathlib.Path, wheel: pathlib.Path) -> None:
    """Zips `root` as a wheel: every file with its mode, and RECORD (each file's sha256 and
    size, as PEP 376 and 427 ask) last. No `wheel` package needed: a fresh venv has none."""
    files = sorted(p for p in root.rglob("*") if p.is_file())
    record = []
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for path in files:
            name = path.relative_to(root).as_posix()
            data = path.read_bytes()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append(f"{name},sha256={digest.decode()},{len(data)}")
            entry = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            entry.external_attr = (path.stat().st_mode & 0o777 | 0o100000) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, data)
        name = f"{info.name}/RECORD"
        record.append(f"{name},,")
        z.writestr(name, "\n".join(record) + "\n")


if __name__ == "__main__":
    sys.exit(main())
