#!/usr/bin/env bash
# Runs a real part of the integration suite against the arm64 binaries, under qemu-user through binfmt_misc:
#
#   systemd/cross/test-qemu.sh BINDIR [SWIFT TEST OPTIONS...]     (as root, after `swift build --build-tests`)
#
# BINDIR holds the arm64 pwflagsd and its pwflags link (systemd/build-arm64.sh: .build-arm64/aarch64-unknown-
# linux-gnu/release). The test runner is the host's own (amd64, built by the plain run); the test kit starts the
# daemon and the CLI from BINDIR (PWFLAGS_PRODUCTS), and compiles the C library and its programs with Debian's
# cross compiler (PWFLAGS_CC), so every program under test is arm64, run by qemu-aarch64 when the kernel execs it.
# They find their shared libraries (libc, libsystemd, libstdc++) in the host's arm64 multiarch packages, which
# .ci/run installs; the fake Pushwoosh, the buses and the Python and Varlink clients are the host's.
#
# The suites: the line socket's methods and reads (get, getAll, isEnabled, typed reads), listen across a reload,
# refresh against the fake Pushwoosh, impressions, the disk cache across a restart, sd_notify, the CLI, the
# Varlink and D-Bus reads, the daemon's own executors (an idle daemon's threads sleep), and the C library's
# calls and its listener on its poll loop. What emulation cannot show: arm64's weaker memory ordering (qemu-user
# on x86 runs the guest's loads and stores in x86's stronger order); ThreadSanitizer on amd64 guards that.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BINDIR=$(cd "${1:?usage: test-qemu.sh BINDIR [SWIFT TEST OPTIONS...]}" && pwd)
shift
"$REPO/systemd/cross/binfmt.sh"
for library in /lib/ld-linux-aarch64.so.1 /usr/lib/aarch64-linux-gnu/libsystemd.so.0 \
    /usr/lib/aarch64-linux-gnu/libstdc++.so.6; do
    [[ -e $library ]] || { echo "test-qemu: $library is missing (apt-get install libc6:arm64 libsystemd0:arm64 libstdc++6:arm64)" >&2; exit 1; }
done
machine=$(LC_ALL=C readelf --file-header "$BINDIR/pwflagsd" | sed -n 's/^ *Machine: *//p')
[[ $machine == *AArch64* ]] || { echo "test-qemu: $BINDIR/pwflagsd is for $machine, not AArch64" >&2; exit 1; }
"$BINDIR/pwflagsd" --version >/dev/null || { echo "test-qemu: the arm64 pwflagsd does not run under qemu" >&2; exit 1; }

suites='MethodTests|ReadingTests|ReloadTests|RefreshCallTests|ImpressionTests|DiskCacheTests|SystemdNotifyTests'
suites+='|CLITests|VarlinkMethodTests|VarlinkListenTests|BusTests|OwnExecutorTests|CLibraryResumeTests'
suites+='|CLibraryTests/(checkoutExample|typedReads|listenerAfterChangeOnly|calls|refreshStatus)'
# One test of those suites cannot hold under emulation: CLITests' run without /proc. qemu-user answers
# /proc/self/cmdline itself (from the guest's own arguments) whether /proc is mounted or not, so the runtime sees
# its command line and the binary runs, where on a device it refuses, as the test asserts on amd64.
cd "$REPO"
PWFLAGS_PRODUCTS=$BINDIR PWFLAGS_CC=aarch64-linux-gnu-gcc \
    swift test --skip-build --ignore-lock --no-parallel --filter "IntegrationTests\.($suites)" \
    --skip 'CLITests/withoutProcNothingRunsAndTheReasonIsSaid' "$@"
