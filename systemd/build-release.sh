#!/usr/bin/env bash
# The static release build that systemd/build-deb.sh packages: the Swift runtime and Foundation linked in (a
# device has no toolchain), with the hardening Debian expects of a binary in /usr/bin.
#
#   systemd/build-release.sh [EXTRA SWIFT BUILD OPTIONS...]     (the binaries land in .build/release)
#
# -z relro -z now: the relocations are resolved at start and their table made read-only (lintian's
# hardening-no-bindnow). --disable-local-rpath: no RUNPATH of $ORIGIN, which would make the loader look for
# libraries beside /usr/bin/pwflagsd.
#
# Linked by lld (it ships with the toolchain) with -z pack-relative-relocs: the 43,000 relative relocations of a
# PIE with the static Swift runtime, 934 KB as RELA entries the loader reads at every start, become a 7.6 KB
# DT_RELR bitmap (glibc 2.36, Debian 12). The daemon is 1 MB smaller stripped and its idle VmRSS 2.3 MiB lower
# (docs/performance.md); the binary requires GLIBC_ABI_DT_RELR, which dpkg-shlibdeps turns into libc6 (>= 2.36).
set -euo pipefail
cd "$(dirname "$0")/.."
exec swift build -c release --static-swift-stdlib --disable-local-rpath -Xswiftc -use-ld=lld \
    -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now -Xlinker -z -Xlinker pack-relative-relocs \
    -Xswiftc -warnings-as-errors "$@"
