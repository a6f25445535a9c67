#!/usr/bin/env bash
# The static release build that systemd/build-deb.sh packages: the Swift runtime and Foundation linked in (a
# device has no toolchain), with the hardening Debian expects of a binary in /usr/bin.
#
#   systemd/build-release.sh [EXTRA SWIFT BUILD OPTIONS...]     (the binaries land in .build/release)
#
# -z relro -z now: the relocations are resolved at start and their table made read-only (lintian's
# hardening-no-bindnow). --disable-local-rpath: no RUNPATH of $ORIGIN, which would make the loader look for
# libraries beside /usr/bin/pwflagsd.
set -euo pipefail
cd "$(dirname "$0")/.."
exec swift build -c release --static-swift-stdlib --disable-local-rpath \
    -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now -Xswiftc -warnings-as-errors "$@"
