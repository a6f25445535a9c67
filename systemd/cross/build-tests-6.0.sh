#!/usr/bin/env bash
# Builds every target, tests included, with Debian 13's Swift 6.0.3 (the arm64 daemon's compiler) and warnings as
# errors, for amd64 in the build root of systemd/cross/make-sdk.sh, then runs the unit tests it built:
#
#   systemd/cross/build-tests-6.0.sh [SWIFT TEST FILTER]     (as root; the build goes to .build-6.0/)
#
# The integration tests are built, not run: they need the host's buses, browsers and venvs, and run with 6.3.1 in
# the plain run and against the arm64 binaries in systemd/cross/test-qemu.sh.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
FILTER=${1:-'^(ExecutorsTests|FlagsCoreTests|FlagsProtocolTests|UnixIOTests|FeatureFlagsTests|PushwooshAPITests|FlagsDaemonTests)\.'}
"$REPO/systemd/cross/in-root.sh" sh -c "cd /src/pwflagsd &&
    swift build --build-tests --scratch-path /src/pwflagsd/.build-6.0 -Xswiftc -warnings-as-errors &&
    swift test --skip-build --scratch-path /src/pwflagsd/.build-6.0 --no-parallel --filter '$FILTER'"
