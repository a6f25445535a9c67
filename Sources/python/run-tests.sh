#!/usr/bin/env bash
# Checks the Python client: makes (or reuses) the pinned venv .build/python-venv, runs mypy --strict on the
# package and the tests, then pytest against the real daemon.
#
#   Sources/python/run-tests.sh [PYTEST ARGS...]
#   Sources/python/run-tests.sh --prepare      (makes the venv only: CI's setup step)
#
# The daemon is $PWFLAGSD_BIN, else .build/debug/pwflagsd; PYTHON (default python3) makes the venv.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
VENV=$REPO/.build/python-venv
# Pinned, so that a new release cannot change what passes; openfeature-sdk as the OFREP tests pin it. build and
# setuptools make the wheel offline (systemd/test-nspawn.sh: python3 -m build --no-isolation); setuptools 70.1 and
# later need no separate wheel package.
PACKAGES=(pytest==8.3.4 mypy==1.13.0 openfeature-sdk==0.10.0 build==1.2.2.post1 setuptools==75.3.0)

check="import importlib.metadata as m, sys; sys.exit(any(m.version(p.split('==')[0]) != p.split('==')[1] for p in sys.argv[1:]))"
if ! "$VENV/bin/python" -c "$check" "${PACKAGES[@]}" 2>/dev/null; then
    "${PYTHON:-python3}" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PACKAGES[@]}"
fi
[[ ${1:-} == --prepare ]] && exit 0
export PWFLAGSD_BIN=${PWFLAGSD_BIN:-$REPO/.build/debug/pwflagsd}
[[ -x $PWFLAGSD_BIN ]] || { echo "run-tests.sh: no pwflagsd at $PWFLAGSD_BIN" >&2; exit 1; }

cd "$REPO"
MYPYPATH=Sources/python "$VENV/bin/python" -m mypy --strict --no-error-summary Sources/python/pwflags
MYPYPATH=Sources/python:Tests/python "$VENV/bin/python" -m mypy --strict --no-error-summary \
    --cache-dir .build/python-venv/.mypy_cache Tests/python
"$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@" Tests/python
