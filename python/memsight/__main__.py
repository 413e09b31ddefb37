"""``python -m memsight [ARGS]``: the same as running ``memsight [ARGS]``."""

from __future__ import annotations

import os
import subprocess
import sys

from memsight._binary import BinaryNotFound, find_binary


def main() -> int:
    """Runs the memsight executable with this command line; returns its exit code."""
    try:
        exe = find_binary()
    except BinaryNotFound as e:
        print("memsight: %s" % e, file=sys.stderr)
        return 2
    args = [exe, *sys.argv[1:]]
    if sys.platform == "win32":
        # No exec on Windows: run it and pass its exit code on.
        try:
            return subprocess.call(args)
        except KeyboardInterrupt:
            return 130
    os.execv(exe, args)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
