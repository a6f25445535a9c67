#!/usr/bin/env bash
# Checks systemd/cross/glibc238-compat.c, the stand-ins for glibc 2.38's functions that the arm64 build links:
#
#   systemd/cross/test-compat.sh ROOT SYSROOT     (as root; systemd/build-arm64.sh runs it before every build)
#
# 1. Each stand-in gives what glibc's own C23 function gives (value, errno, end pointer) over a table of inputs
#    that covers the binary prefix, signs, white space, overflow and every base: systemd/cross/test-compat.c,
#    built and run in ROOT, the Debian 13 build root, whose glibc (2.41) has the real ones.
# 2. Every sscanf format in the members of SYSROOT's static Swift libraries that call __isoc23_sscanf reads no
#    binary number (%i or %b), the one thing the stand-in passes on to glibc 2.36 unchanged.
# 3. Nothing in those libraries needs another glibc 2.38 function: a program linked with the stand-ins against
#    SYSROOT (Debian 12) requires at most GLIBC_2.36 (systemd/build-arm64.sh checks pwflagsd itself too).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${1:?usage: test-compat.sh ROOT SYSROOT}
SYSROOT=${2:?usage: test-compat.sh ROOT SYSROOT}
WORK=$(mktemp -d "$ROOT/tmp/compat.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cp "$HERE/glibc238-compat.c" "$HERE/test-compat.c" "$WORK/"
inside=${WORK#"$ROOT"}
renames=""
for name in strtol strtoll strtoul strtoull sscanf; do renames+=" -D__isoc23_$name=compat_$name"; done
renames+=" -Dstrlcpy=compat_strlcpy -Dstrlcat=compat_strlcat"
chroot "$ROOT" sh -c "cd $inside && /usr/libexec/swift/bin/clang -O1 -Wall -Wextra -Werror $renames \
    -fvisibility=default -c glibc238-compat.c -o compat.o &&
    /usr/libexec/swift/bin/clang -O1 -Wall -Wextra -Werror -Wno-format test-compat.c compat.o -o test-compat &&
    ./test-compat" | sed 's/^/compat: /'

formats=0
for archive in "$SYSROOT"/usr/lib/swift_static/linux/*.a; do
    while read -r member; do
        (cd "$WORK" && ar x "$archive" "$member")
        while IFS= read -r format; do
            formats=$((formats + 1))
            if perl -ne 'exit 1 if /%[*0-9hljztLqm]*[ib]/' <<<"$format"; then :; else
                echo "compat: $(basename "$archive")($member) has an sscanf format that reads binary: $format" >&2
                exit 1
            fi
        done < <(strings -a "$WORK/$member" | grep '%' || true)
        rm -f "$WORK/$member"
    done < <(nm -A "$archive" 2>/dev/null | awk '$NF == "__isoc23_sscanf" && $(NF-1) == "U" { split($1, p, ":"); print p[2] }' | sort -u)
done
echo "compat: $formats format strings in the callers of __isoc23_sscanf, none reading binary"
