#!/usr/bin/env bash
# Builds the arm64 packages on a Debian 12 amd64 machine that reaches only Debian's mirror:
#
#   systemd/build-arm64.sh OUTDIR      (as root; prints the packages' paths, the daemon's first)
#
# makes pwflagsd_VERSION_arm64.deb, libpwflags0_VERSION_arm64.deb and libpwflags-dev_VERSION_arm64.deb in OUTDIR,
# with the same contents as the amd64 ones (systemd/build-deb.sh makes both), for Debian 12 and 13 on arm64.
#
# 1. systemd/cross/make-sdk.sh makes, once, a Debian 13 amd64 root with Debian's Swift 6.0.3 and in it a Swift
#    SDK for aarch64 whose sysroot is Debian 12 arm64 (about 6 minutes the first time, cached in
#    /var/cache/pwflagsd-cross).
# 2. systemd/cross/test-compat.sh checks the stand-ins for glibc 2.38's functions against glibc's own.
# 3. systemd/build-release.sh runs in that root with the SDK: the same static release as amd64's (Swift runtime
#    linked in, -z relro -z now, packed relocations, warnings as errors), into .build-arm64/ of the repository.
#    The build gets the repository through systemd/cross/in-root.sh, so nothing stays mounted.
# 4. The binary may need glibc 2.36 at most (Debian 12), checked on its symbol versions.
# 5. systemd/build-deb.sh packages it (it reads the architecture off the binary), and the C library with Debian's
#    cross compiler (gcc-aarch64-linux-gnu); lintian checks the three packages; systemd/check-budget.sh the sizes.
#
# Needs, on the host: debootstrap, dpkg-dev, lintian, binutils, gcc-aarch64-linux-gnu, and the arm64 runtime
# libraries that dpkg-shlibdeps reads (libc6:arm64 libsystemd0:arm64 libstdc++6:arm64 libgcc-s1:arm64):
# .ci/run installs them, and docs/development.md gives the commands.
# PWFLAGSD_ARM64_SCRATCH changes the build folder (default REPO/.build-arm64).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUTDIR=$(realpath -m "${1:?usage: build-arm64.sh OUTDIR}")
SCRATCH=${PWFLAGSD_ARM64_SCRATCH:-$REPO/.build-arm64}
[[ $(id -u) == 0 ]] || { echo "build-arm64: must run as root (debootstrap, chroot)" >&2; exit 1; }
[[ $SCRATCH == "$REPO"/* ]] || { echo "build-arm64: the build folder must be inside the repository" >&2; exit 1; }
START=$SECONDS

ROOT=$("$REPO/systemd/cross/make-sdk.sh")
SDK=/opt/swift-sdks/pwflagsd-arm64.artifactbundle/bookworm-aarch64/sysroot
"$REPO/systemd/cross/test-compat.sh" "$ROOT" "$ROOT$SDK"
echo "# build-arm64: the SDK is ready after $((SECONDS - START)) s" >&2

inside=/src/pwflagsd/${SCRATCH#"$REPO"/}
"$REPO/systemd/cross/in-root.sh" env PKG_CONFIG_SYSROOT_DIR="$SDK" /src/pwflagsd/systemd/build-release.sh \
    --swift-sdks-path /opt/swift-sdks --swift-sdk pwflagsd-arm64 \
    --pkg-config-path "$SDK/usr/lib/aarch64-linux-gnu/pkgconfig" --scratch-path "$inside" --product pwflagsd >&2
BINDIR=$SCRATCH/aarch64-unknown-linux-gnu/release
# The package ships one binary, which runs the CLI when started as pwflags; the tests and the budget read both.
ln -sfn pwflagsd "$BINDIR/pwflags"
echo "# build-arm64: pwflagsd built after $((SECONDS - START)) s" >&2

newest=$(readelf --version-info --wide "$BINDIR/pwflagsd" | grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2,2n -u | tail -1)
if [[ -z $newest ]] || ((${newest#GLIBC_2.} > 36)); then
    echo "build-arm64: pwflagsd needs ${newest:-no glibc version?}; Debian 12 has glibc 2.36" >&2
    exit 1
fi
echo "# build-arm64: the newest glibc pwflagsd needs is $newest" >&2

packages=$("$REPO/systemd/build-deb.sh" "$BINDIR" "$OUTDIR")
# shellcheck disable=SC2086 # one path a line, none with spaces
lintian --fail-on error --tag-display-limit 0 $packages >&2
"$REPO/systemd/check-budget.sh" "$BINDIR" "$(head -1 <<<"$packages")" >&2
echo "# build-arm64: packages done after $((SECONDS - START)) s" >&2
echo "$packages"
