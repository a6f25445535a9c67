#!/usr/bin/env bash
# Makes this amd64 host run arm64 (aarch64) programs through qemu-user: the kernel's binfmt_misc hands every
# aarch64 ELF to qemu-aarch64-static. systemd/make-test-root.sh needs it for an arm64 root (debootstrap's second
# stage runs the root's own programs) and systemd/test-nspawn.sh for booting one (systemd as PID 1 under qemu).
#
#   systemd/cross/binfmt.sh     (as root; idempotent: a registration of the same interpreter is left as it is)
#   PWFLAGSD_QEMU_AARCH64=/path/to/qemu-aarch64 systemd/cross/binfmt.sh
#
# Mounts binfmt_misc on /proc/sys/fs/binfmt_misc when it is not, and registers qemu-aarch64 from Debian's
# qemu-user-static (/usr/lib/binfmt.d/qemu-aarch64.conf) when /proc/sys/fs/binfmt_misc/qemu-aarch64 is missing or
# names another interpreter. PWFLAGSD_QEMU_AARCH64 names a static qemu-aarch64 of its own instead (the same
# line, another interpreter): Debian 12's qemu 7.2 cannot boot Debian 13's systemd 257 (systemd/test-nspawn.sh
# says why); bookworm-backports' or trixie's qemu-user 10.0 can. The F flag pins the interpreter's file when it is
# registered: after an upgrade of qemu, `echo -1 >/proc/sys/fs/binfmt_misc/qemu-aarch64` and run this again.
# Debian's line has the F flag: the kernel opens the interpreter once, at registration, so it runs inside a
# container whose root has no qemu of its own. A registration without F (qemu-user-binfmt's, or one made by
# hand) is refused: the containers would fail to start their programs. binfmt_misc is one table for the whole
# host (containers included), so the registration outlives this script, as systemd-binfmt.service's would.
#
# Then runs a tiny static aarch64 program (made here, 132 bytes: exit(42)) to prove the handler works.
set -euo pipefail

die() { echo "binfmt: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "must run as root"

CONF=/usr/lib/binfmt.d/qemu-aarch64.conf
BINFMT=/proc/sys/fs/binfmt_misc
ENTRY=$BINFMT/qemu-aarch64

if [[ ! -e $BINFMT/register ]]; then
    mount -t binfmt_misc binfmt_misc "$BINFMT" || die "could not mount binfmt_misc on $BINFMT"
fi
[[ $(cat "$BINFMT/status") == enabled ]] || die "binfmt_misc is disabled ($BINFMT/status); echo 1 >$BINFMT/status"

[[ -f $CONF ]] || die "$CONF is missing: apt-get install qemu-user-static"
line=$(grep -v '^[[:space:]]*#' "$CONF" | grep -m1 '^:qemu-aarch64:') || die "$CONF has no :qemu-aarch64: line"
interpreter=$(cut -d: -f7 <<<"$line")
if [[ -n ${PWFLAGSD_QEMU_AARCH64:-} ]]; then
    interpreter=$PWFLAGSD_QEMU_AARCH64
    line=$(awk -F: -v OFS=: -v interpreter="$interpreter" '{ $7 = interpreter; print }' <<<"$line")
fi
[[ -x $interpreter ]] || die "$interpreter is missing: apt-get install qemu-user-static"
# One run at a time from here: a second one must not undo a registration while the first makes it.
exec 9>/run/pwflagsd-binfmt.lock
flock 9
if [[ -e $ENTRY && $(sed -n 's/^interpreter //p' "$ENTRY") != "$interpreter" ]]; then
    echo "# qemu-aarch64 was registered with $(sed -n 's/^interpreter //p' "$ENTRY"): registered again with $interpreter"
    echo -1 >"$ENTRY" 2>/dev/null || true
fi
# With F the kernel keeps the file it opened at registration: after an upgrade of qemu (bookworm-backports' 10.0
# over Debian 12's 7.2, which cannot boot Debian 13's systemd) the old one would still run, under the same path.
# The file registered is noted in /run (which goes with the registrations at a reboot); another one, or a
# registration made by someone else, is made again.
STAMP=/run/pwflagsd-binfmt-aarch64
identity="$interpreter $(stat -L -c '%d:%i:%s:%Y' "$interpreter")"
if [[ -e $ENTRY && $(cat "$STAMP" 2>/dev/null) != "$identity" ]]; then
    echo "# qemu-aarch64's registration may hold another file than $interpreter is now: registered again"
    echo -1 >"$ENTRY" 2>/dev/null || true
fi
if [[ ! -e $ENTRY ]]; then
    # Two runs at once: the second one's write fails with EEXIST, and the entry is there all the same.
    printf '%s' "$line" >"$BINFMT/register" 2>/dev/null || [[ -e $ENTRY ]] ||
        die "the kernel refused the registration from $CONF"
    echo "# registered qemu-aarch64 ($interpreter)"
fi
echo "$identity" >"$STAMP"
[[ $(head -1 "$ENTRY") == enabled ]] || die "$ENTRY is disabled; echo 1 >$ENTRY"
grep -q '^flags: .*F' "$ENTRY" ||
    die "$ENTRY has no F flag (the interpreter would be looked up inside each container): echo -1 >$ENTRY and run this again"

# The self-check: an ELF header, one loadable segment and three instructions (mov x0, #42; mov x8, #93 (exit);
# svc #0), loaded at 0x400000.
probe=$(mktemp /tmp/pwflagsd-aarch64-probe.XXXXXX)
trap 'rm -f "$probe"' EXIT
hex='7f454c46020101000000000000000000 0200b700010000007800400000000000 4000000000000000 0000000000000000
     00000000 4000 3800 0100 0000 0000 0000
     01000000 05000000 0000000000000000 0000400000000000 0000400000000000
     8400000000000000 8400000000000000 0010000000000000
     400580d2 a80b80d2 010000d4'
hex=${hex//[[:space:]]/}
for ((i = 0; i < ${#hex}; i += 2)); do printf '%b' "\\x${hex:i:2}"; done >"$probe"
chmod 0700 "$probe"
status=0
"$probe" 2>/dev/null || status=$?
[[ $status == 42 ]] || die "a static aarch64 program did not run through $ENTRY (exit $status, expected 42)"
echo "# qemu-aarch64 is registered and runs aarch64 programs ($(sed -n 's/^interpreter //p' "$ENTRY"))"
