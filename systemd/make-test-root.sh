#!/usr/bin/env bash
# Makes the clean Debian root that systemd/test-nspawn.sh boots, or leaves the one already made, and refreshes
# its package lists when they are older than a day.
#
#   systemd/make-test-root.sh SUITE     (as root; SUITE is bookworm or trixie)
#
# The root: `debootstrap --variant=minbase SUITE` plus systemd and dbus (to boot it and drive it, as apt would
# install systemd with its Recommends), procps (ps, pgrep) and python3 (the fake Pushwoosh and the OFREP client
# of the checks), nothing the package depends on besides systemd. It is kept in $PWFLAGSD_NSPAWN_ROOT (default
# /var/cache/pwflagsd-test/SUITE-minbase; delete it to make it again); a root made by another recipe is made
# again. test-nspawn.sh runs this first; CI runs it for both suites at its start, beside the builds, since
# debootstrap mostly waits on the mirror.
set -euo pipefail

SUITE=${1:?usage: make-test-root.sh SUITE}
[[ $SUITE == bookworm || $SUITE == trixie ]] || { echo "make-test-root: SUITE is bookworm or trixie" >&2; exit 1; }
[[ $(id -u) == 0 ]] || { echo "make-test-root: must run as root" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "make-test-root: debootstrap is missing" >&2; exit 1; }
ROOT=${PWFLAGSD_NSPAWN_ROOT:-/var/cache/pwflagsd-test/$SUITE-minbase}
MIRROR=${PWFLAGSD_NSPAWN_MIRROR:-http://deb.debian.org/debian}
LOG=$(mktemp /tmp/pwflagsd-root.XXXXXX)
# A root being made when the run was interrupted is not kept half made.
trap 'rm -f "$LOG"; rm -rf --one-file-system "$ROOT.new"' EXIT

START=$(date +%s)
PACKAGES=systemd,systemd-sysv,dbus,procps,python3
RECIPE="debootstrap --variant=minbase --include=$PACKAGES $SUITE $MIRROR"
if [[ $(cat "$ROOT/.pwflagsd-test-root" 2>/dev/null) != "$RECIPE" ]]; then
    # Made beside its final place and renamed when complete, so a failed debootstrap leaves no root behind.
    rm -rf --one-file-system "$ROOT" "$ROOT.new"
    mkdir -p "$(dirname "$ROOT")"
    debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOT.new" "$MIRROR" >"$LOG" 2>&1 ||
        { tail -30 "$LOG"; echo "make-test-root: debootstrap failed" >&2; exit 1; }
    printf 'deb %s %s main\ndeb %s %s-updates main\ndeb %s-security %s-security main\n' \
        "$MIRROR" "$SUITE" "$MIRROR" "$SUITE" "${MIRROR%/debian}/debian" "$SUITE" >"$ROOT.new/etc/apt/sources.list"
    echo "$RECIPE" >"$ROOT.new/.pwflagsd-test-root"
    mv "$ROOT.new" "$ROOT"
    echo "# made the $SUITE root in $(($(date +%s) - START)) s"
fi
# Fresh package lists, so that apt finds the Depends' current versions on the mirror.
if [[ -z $(find "$ROOT/var/lib/apt/lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 -print -quit) ]]; then
    cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
    chroot "$ROOT" apt-get update -q >"$LOG" 2>&1 ||
        { cat "$LOG"; echo "make-test-root: apt-get update in the $SUITE root failed" >&2; exit 1; }
    echo "# refreshed the $SUITE root's package lists"
fi
