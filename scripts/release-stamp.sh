#!/usr/bin/env bash
# Prints one hash of every input the release set (scripts/release.sh) builds from: the
# manifests, the lock, build.rs, assets/, python/, pyproject.toml and scripts/. `.ci/run` runs
# the release set when this differs from .ci/release.stamp (written by a release run that
# passed). Only tracked files count, by content.
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files -z -- Cargo.toml Cargo.lock build.rs pyproject.toml assets python scripts |
  sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
