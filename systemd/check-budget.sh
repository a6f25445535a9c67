#!/usr/bin/env bash
# The device budget: no ICU in a release binary, the daemon at most 16 MB stripped, the package's Installed-Size at
# most 24576 KiB. Fails (exit 1) naming what is over.
#
# Usage: systemd/check-budget.sh BINDIR PACKAGE.deb
#   BINDIR: the output of `swift build -c release --static-swift-stdlib` (pwflagsd, pwflags, unstripped), for
#   amd64 (systemd/build-release.sh) or arm64 (systemd/build-arm64.sh, where pwflags is a link to pwflagsd).
set -euo pipefail
BINDIR=${1:?usage: check-budget.sh BINDIR PACKAGE.deb}
PACKAGE=${2:?usage: check-budget.sh BINDIR PACKAGE.deb}
readonly MAX_INSTALLED_KIB=24576
readonly MAX_DAEMON_BYTES=16000000
failed=0
# shellcheck source=systemd/cross/arch.sh
. "$(dirname "$0")/cross/arch.sh"
binary_arch "$BINDIR/pwflagsd"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for binary in pwflagsd pwflags; do
    # ICU's data blob is the symbol icudt<version>_dat; its code brings u_*/ucol_* symbols and the
    # FoundationInternationalization / _FoundationICU modules that wrap it.
    if nm "$BINDIR/$binary" 2>/dev/null | grep -E 'icudt[0-9]+_dat|_FoundationICU|FoundationInternationalization' >/dev/null; then
        echo "check-budget: $binary links ICU (nm finds icudt*_dat or _FoundationICU)" >&2
        failed=1
    fi
    if strings -a "$BINDIR/$binary" | grep -E '^icudt[0-9]+[lb]' >/dev/null; then
        echo "check-budget: $binary carries ICU's data (strings finds icudt*)" >&2
        failed=1
    fi
    cp "$BINDIR/$binary" "$work/$binary"
    "$STRIP" --remove-section=.comment --remove-section=.note --strip-unneeded "$work/$binary"
    echo "check-budget: $binary $(stat -c %s "$work/$binary") bytes stripped"
done

daemon=$(stat -c %s "$work/pwflagsd")
if [ "$daemon" -gt "$MAX_DAEMON_BYTES" ]; then
    echo "check-budget: pwflagsd is $daemon bytes stripped, over $MAX_DAEMON_BYTES" >&2
    failed=1
fi
installed=$(dpkg-deb -f "$PACKAGE" Installed-Size)
echo "check-budget: Installed-Size $installed KiB (budget $MAX_INSTALLED_KIB)"
if [ "$installed" -gt "$MAX_INSTALLED_KIB" ]; then
    echo "check-budget: Installed-Size $installed KiB is over $MAX_INSTALLED_KIB" >&2
    failed=1
fi
exit "$failed"
