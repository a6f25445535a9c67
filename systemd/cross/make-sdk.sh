#!/usr/bin/env bash
# Makes, once, what systemd/build-arm64.sh builds with, and leaves what is already made:
#
#   systemd/cross/make-sdk.sh     (as root; prints the build root's path)
#
# - The build root: Debian 13 (trixie, amd64) made with debootstrap, holding Debian's Swift 6.0.3 (`swiftlang`).
#   Its compiler needs glibc 2.38, so it runs in this root (chroot), not on a Debian 12 host.
# - In it, /opt/swift-sdks/pwflagsd-arm64.artifactbundle: a Swift SDK for aarch64-unknown-linux-gnu whose
#   sysroot is Debian 12 (bookworm) arm64 (glibc 2.36, libsystemd 252, libcurl 7.88), so what it links runs on
#   Debian 12 and 13 alike, and whose Swift resources (the aarch64 standard library, shared and static) come from
#   Debian 13's `swiftlang:arm64` of the same version as the compiler.
# - In the bundle, glibc238-compat.o (systemd/cross/glibc238-compat.c): the seven C functions that Debian 13's
#   static Swift runtime calls under their glibc 2.38 names. docs/decisions.md says why this is safe.
#
# Kept in $PWFLAGSD_CROSS_CACHE (default /var/cache/pwflagsd-cross); a part made by another recipe is made again,
# so editing this file or the compat source rebuilds what they changed. Needs debootstrap, dpkg-deb and Debian's
# mirror ($PWFLAGSD_CROSS_MIRROR, default deb.debian.org). Takes about 6 minutes on a machine with nothing
# cached, mostly waiting on the mirror; a few seconds otherwise.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${PWFLAGSD_CROSS_CACHE:-/var/cache/pwflagsd-cross}
MIRROR=${PWFLAGSD_CROSS_MIRROR:-http://deb.debian.org/debian}
ROOT=$CACHE/trixie-amd64
BUNDLE=$ROOT/opt/swift-sdks/pwflagsd-arm64.artifactbundle
SDK=$BUNDLE/bookworm-aarch64
SYSROOT=$SDK/sysroot
[[ $(id -u) == 0 ]] || { echo "make-sdk: must run as root" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "make-sdk: debootstrap is missing" >&2; exit 1; }
mkdir -p "$CACHE"
# One at a time: CI runs it from two groups at once (the arm64 build, and the 6.0.3 build through in-root.sh).
exec 9>"$CACHE/.lock"
flock 9
LOG=$(mktemp /tmp/pwflagsd-sdk.XXXXXX)
trap 'rm -f "$LOG"; rm -rf --one-file-system "$ROOT.new" "$SYSROOT.new" "$CACHE/swift-arm64.new"' EXIT

say() { echo "# make-sdk: $*" >&2; }
run() { # DESCRIPTION COMMAND...: runs quietly, shows the log on failure
    local what=$1
    shift
    "$@" >"$LOG" 2>&1 || { tail -40 "$LOG" >&2; echo "make-sdk: $what failed" >&2; exit 1; }
}
stamp_is() { [[ $(cat "$1/.pwflagsd-recipe" 2>/dev/null) == "$2" ]]; }

# Debian's -dev packages link their libraries by absolute paths (libm.so -> /lib/aarch64-linux-gnu/libm.so.6). In
# a sysroot those resolve on the build machine instead: made relative, they stay inside it.
relative_links() { # SYSROOT
    local link target
    while IFS= read -r -d '' link; do
        target=$(readlink "$link")
        ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$1$target")" "$link"
    done < <(find "$1" -type l -lname '/*' -print0)
}

# 1. The build root with Debian's Swift.
PACKAGES="swiftlang libsystemd-dev libcurl4-openssl-dev pkg-config"
RECIPE="debootstrap --variant=minbase trixie; apt-get install $PACKAGES"
if ! stamp_is "$ROOT" "$RECIPE"; then
    start=$SECONDS
    rm -rf --one-file-system "$ROOT" "$ROOT.new"
    run "debootstrap trixie" debootstrap --variant=minbase --include=ca-certificates trixie "$ROOT.new" "$MIRROR"
    cp /etc/resolv.conf "$ROOT.new/etc/resolv.conf"
    mount -t proc proc "$ROOT.new/proc"
    status=0
    chroot "$ROOT.new" sh -c "apt-get update -q && DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends $PACKAGES" >"$LOG" 2>&1 || status=$?
    umount "$ROOT.new/proc"
    ((status == 0)) || { tail -40 "$LOG" >&2; echo "make-sdk: installing Swift in the build root failed" >&2; exit 1; }
    chroot "$ROOT.new" apt-get clean
    echo "$RECIPE" >"$ROOT.new/.pwflagsd-recipe"
    mv "$ROOT.new" "$ROOT"
    say "made the trixie build root in $((SECONDS - start)) s"
fi
# shellcheck disable=SC2016 # dpkg-query's own field syntax
SWIFT_VERSION=$(chroot "$ROOT" dpkg-query -W -f '${Version}' swiftlang)

# 2. The aarch64 Swift resources, from the arm64 package of the very version the compiler is (a .swiftmodule is
#    read only by the compiler that wrote it).
RESOURCES=$CACHE/swift-arm64
RECIPE="swiftlang:arm64 $SWIFT_VERSION"
if ! stamp_is "$RESOURCES" "$RECIPE"; then
    start=$SECONDS
    rm -rf "$RESOURCES" "$RESOURCES.new"
    mkdir -p "$RESOURCES.new"
    run "downloading swiftlang:arm64" chroot "$ROOT" sh -c "dpkg --add-architecture arm64 && apt-get update -q &&
        mkdir -p /tmp/arm64 && cd /tmp/arm64 && apt-get download swiftlang:arm64=$SWIFT_VERSION"
    run "unpacking swiftlang:arm64" dpkg-deb -x "$ROOT"/tmp/arm64/swiftlang_*_arm64.deb "$RESOURCES.new/deb"
    rm -rf "$ROOT/tmp/arm64"
    mkdir -p "$RESOURCES.new/lib"
    mv "$RESOURCES.new/deb/usr/libexec/swift/lib/swift" "$RESOURCES.new/deb/usr/libexec/swift/lib/swift_static" \
        "$RESOURCES.new/deb/usr/libexec/swift/lib/clang" "$RESOURCES.new/lib/"
    rm -rf "$RESOURCES.new/deb"
    echo "$RECIPE" >"$RESOURCES.new/.pwflagsd-recipe"
    mv "$RESOURCES.new" "$RESOURCES"
    say "unpacked the aarch64 Swift $SWIFT_VERSION resources in $((SECONDS - start)) s"
fi

# 3. The Debian 12 arm64 sysroot: the first stage of debootstrap only (it downloads, runs nothing arm64), every
#    package then unpacked, the Swift resources copied in.
SYSROOT_PACKAGES=libc6-dev,libgcc-12-dev,libstdc++-12-dev,libsystemd-dev,libcurl4-openssl-dev
RECIPE="debootstrap --arch=arm64 --foreign bookworm $SYSROOT_PACKAGES; $SWIFT_VERSION"
if ! stamp_is "$SYSROOT" "$RECIPE"; then
    start=$SECONDS
    rm -rf --one-file-system "$SYSROOT" "$SYSROOT.new"
    mkdir -p "$SDK"
    run "debootstrap bookworm arm64" debootstrap --arch=arm64 --foreign --variant=minbase \
        --include="$SYSROOT_PACKAGES" bookworm "$SYSROOT.new" "$MIRROR"
    for deb in "$SYSROOT.new"/var/cache/apt/archives/*.deb; do dpkg-deb -x "$deb" "$SYSROOT.new"; done
    rm -rf "$SYSROOT.new/var/cache/apt/archives" "$SYSROOT.new/debootstrap"
    relative_links "$SYSROOT.new"
    mkdir -p "$SYSROOT.new/usr/lib/swift" "$SYSROOT.new/usr/lib/swift_static" "$SYSROOT.new/usr/lib/clang"
    cp -a "$RESOURCES/lib/swift/." "$SYSROOT.new/usr/lib/swift/"
    cp -a "$RESOURCES/lib/swift_static/." "$SYSROOT.new/usr/lib/swift_static/"
    cp -a "$RESOURCES/lib/clang/." "$SYSROOT.new/usr/lib/clang/"
    echo "$RECIPE" >"$SYSROOT.new/.pwflagsd-recipe"
    mv "$SYSROOT.new" "$SYSROOT"
    say "made the bookworm arm64 sysroot in $((SECONDS - start)) s"
fi

# 4. The bundle's descriptions and the compat object, replaced only when they change, so that a build running in
#    the root meanwhile never sees one half written.
put() { # FILE: standard input becomes FILE unless FILE already holds it
    local new
    new=$(mktemp "$1.XXXXXX")
    cat >"$new"
    if cmp -s "$new" "$1"; then rm -f "$new"; else chmod 0644 "$new" && mv "$new" "$1"; fi
}
put "$BUNDLE/info.json" <<JSON
{
  "schemaVersion": "1.0",
  "artifacts": {
    "pwflagsd-arm64": {
      "type": "swiftSDK",
      "version": "$SWIFT_VERSION",
      "variants": [{ "path": "bookworm-aarch64" }]
    }
  }
}
JSON
put "$SDK/swift-sdk.json" <<'JSON'
{
  "schemaVersion": "4.0",
  "targetTriples": {
    "aarch64-unknown-linux-gnu": {
      "sdkRootPath": "sysroot",
      "swiftResourcesPath": "sysroot/usr/lib/swift",
      "swiftStaticResourcesPath": "sysroot/usr/lib/swift_static",
      "toolsetPaths": ["toolset.json"]
    }
  }
}
JSON
COMPAT=/opt/swift-sdks/pwflagsd-arm64.artifactbundle/bookworm-aarch64/glibc238-compat.o
put "$SDK/toolset.json" <<JSON
{
  "schemaVersion": "1.0",
  "swiftCompiler": { "extraCLIOptions": ["-use-ld=lld"] },
  "linker": { "extraCLIOptions": ["$COMPAT"] }
}
JSON
if ! cmp -s "$HERE/glibc238-compat.c" "$SDK/glibc238-compat.c" || [[ ! -s $ROOT$COMPAT ]]; then
    cp "$HERE/glibc238-compat.c" "$SDK/glibc238-compat.c.new"
    run "compiling glibc238-compat.c" chroot "$ROOT" /usr/libexec/swift/bin/clang --target=aarch64-linux-gnu \
        --sysroot="${SYSROOT#"$ROOT"}" -O2 -fPIC -Wall -Wextra -Werror -c -x c "${SDK#"$ROOT"}/glibc238-compat.c.new" \
        -o "$COMPAT.new"
    mv "$ROOT$COMPAT.new" "$ROOT$COMPAT"
    mv "$SDK/glibc238-compat.c.new" "$SDK/glibc238-compat.c"
fi
echo "$ROOT"
