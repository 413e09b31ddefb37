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

import pathlib
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import tomllib

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
        # `wheel pack` writes RECORD (every file's hash) and names the file from the tag.
        subprocess.run(
            [sys.executable, "-m", "wheel", "pack", str(root), "--dest-dir", str(out)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    print(next(out.glob(f"{name}-{version}-{tag}.whl")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
