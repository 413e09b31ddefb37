"""Finding the ``memsight`` executable that pip installed beside this package."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig

EXE = "memsight.exe" if sys.platform == "win32" else "memsight"


class BinaryNotFound(FileNotFoundError):
    """The memsight executable is not where pip puts it, nor on PATH."""


def _candidates():
    # An explicit choice first (a development build, or a copy outside the wheel).
    env = os.environ.get("MEMSIGHT_BIN")
    if env:
        yield env
    # Where pip installs scripts: the scheme of this interpreter (venv, system, conda), then
    # the user scheme (`pip install --user`).
    yield os.path.join(sysconfig.get_path("scripts"), EXE)
    user_scheme = {"nt": "nt_user", "posix": "posix_user"}.get(os.name)
    if sys.platform == "darwin" and "osx_framework_user" in sysconfig.get_scheme_names():
        user_scheme = "osx_framework_user"
    if user_scheme:
        try:
            yield os.path.join(sysconfig.get_path("scripts", scheme=user_scheme), EXE)
        except KeyError:
            pass
    # `pip install --target DIR`: the package is DIR/memsight, the script DIR/bin/memsight.
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(os.path.dirname(here), "bin", EXE)
    # Anything on PATH (pipx, uv tool, the .deb).
    found = shutil.which(EXE)
    if found:
        yield found


def find_binary() -> str:
    """The path of the memsight executable; raises :class:`BinaryNotFound` when there is none,
    or when ``MEMSIGHT_BIN`` names a file that is not there (a typo must not quietly run
    another build)."""
    env = os.environ.get("MEMSIGHT_BIN")
    if env and not os.path.isfile(env):
        raise BinaryNotFound(
            "MEMSIGHT_BIN is %r, which is not a file; unset it to use the installed memsight" % env
        )
    tried = []
    for path in _candidates():
        if os.path.isfile(path):
            return path
        tried.append(path)
    raise BinaryNotFound(
        "the memsight executable was not found (looked in: %s); reinstall with "
        "`pip install --force-reinstall memsight`, or set MEMSIGHT_BIN to its path" % ", ".join(tried)
    )
