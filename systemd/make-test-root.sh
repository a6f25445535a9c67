#!/usr/bin/env bash
# Makes the clean Debian root that systemd/test-nspawn.sh boots, or leaves the one already made, and refreshes
# its package lists when they are older than a day.
#
#   systemd/make-test-root.sh SUITE [ARCH]     (as root; SUITE is bookworm or trixie, ARCH amd64 (the default)
#                                               or arm64)
#
# The root: `debootstrap --variant=minbase SUITE` plus systemd and dbus (to boot it and drive it, as apt would
# install systemd with its Recommends), procps (ps, pgrep) and python3 (the fake Pushwoosh and the OFREP client
# of the checks), nothing the package depends on besides systemd. An arm64 root has gcc, libc6-dev and pkg-config
# too, which the C library's check compiles with: the amd64 legs install them from the mirror in seconds, an arm64
# leg would spend two minutes of its ten unpacking them under qemu, on every run. It is kept in $PWFLAGSD_NSPAWN_ROOT (default
# /var/cache/pwflagsd-test/SUITE-minbase; delete it to make it again); a root made by another recipe is made
# again. test-nspawn.sh runs this first; CI runs it for both suites at its start, beside the builds, since
# debootstrap mostly waits on the mirror.
set -euo pipefail

SUITE=${1:?usage: make-test-root.sh SUITE [ARCH]}
ARCH=${2:-amd64}
[[ $SUITE == bookworm || $SUITE == trixie ]] || { echo "make-test-root: SUITE is bookworm or trixie" >&2; exit 1; }
[[ $ARCH == amd64 || $ARCH == arm64 ]] || { echo "make-test-root: ARCH is amd64 or arm64" >&2; exit 1; }
[[ $(id -u) == 0 ]] || { echo "make-test-root: must run as root" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "make-test-root: debootstrap is missing" >&2; exit 1; }
# The amd64 root keeps the name it had before there were others, so that the roots already made stay valid.
NAME=$SUITE-minbase
[[ $ARCH == amd64 ]] || NAME=$SUITE-$ARCH-minbase
ROOT=${PWFLAGSD_NSPAWN_ROOT:-/var/cache/pwflagsd-test/$NAME}
# A foreign root's programs (debootstrap's second stage, apt-get update in it) run through qemu-user.
if [[ $ARCH != $(dpkg --print-architecture) ]]; then
    "$(dirname "$0")/cross/binfmt.sh" >/dev/null || { echo "make-test-root: cannot run $ARCH programs" >&2; exit 1; }
fi
MIRROR=${PWFLAGSD_NSPAWN_MIRROR:-http://deb.debian.org/debian}
LOG=$(mktemp /tmp/pwflagsd-root.XXXXXX)
# A root being made when the run was interrupted is not kept half made.
trap 'rm -f "$LOG"; rm -rf --one-file-system "$ROOT.new"' EXIT

START=$(date +%s)
PACKAGES=systemd,systemd-sysv,dbus,procps,python3
[[ $ARCH == amd64 ]] || PACKAGES=$PACKAGES,gcc,libc6-dev,pkg-config
# The amd64 recipe is written as it was before --arch, so that its stamp still matches the roots already made.
ARCH_OPTION=
[[ $ARCH == amd64 ]] || ARCH_OPTION="--arch=$ARCH "
RECIPE="debootstrap $ARCH_OPTION--variant=minbase --include=$PACKAGES $SUITE $MIRROR"
if [[ $(cat "$ROOT/.pwflagsd-test-root" 2>/dev/null) != "$RECIPE" ]]; then
    # Made beside its final place and renamed when complete, so a failed debootstrap leaves no root behind.
    rm -rf --one-file-system "$ROOT" "$ROOT.new"
    mkdir -p "$(dirname "$ROOT")"
    debootstrap --arch="$ARCH" --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOT.new" "$MIRROR" >"$LOG" 2>&1 ||
        { tail -30 "$LOG"; echo "make-test-root: debootstrap failed" >&2; exit 1; }
    printf 'deb %s %s main\ndeb %s %s-updates main\ndeb %s-security %s-security main\n' \
        "$MIRROR" "$SUITE" "$MIRROR" "$SUITE" "${MIRROR%/debian}/debian" "$SUITE" >"$ROOT.new/etc/apt/sources.list"
    echo "$RECIPE" >"$ROOT.new/.pwflagsd-test-root"
    mv "$ROOT.new" "$ROOT"
    echo "# made the $SUITE $ARCH root in $(($(date +%s) - START)) s"
fi
# Fresh package lists, so that apt finds the Depends' current versions on the mirror.
if [[ -z $(find "$ROOT/var/lib/apt/lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 -print -quit) ]]; then
    cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
    chroot "$ROOT" apt-get update -q >"$LOG" 2>&1 ||
        { cat "$LOG"; echo "make-test-root: apt-get update in the $SUITE $ARCH root failed" >&2; exit 1; }
    echo "# refreshed the $SUITE $ARCH root's package lists"
fi
