#!/usr/bin/env bash
# Builds libpwflags0_VERSION_ARCH.deb and libpwflags-dev_VERSION_ARCH.deb (the C client library), as part of
# systemd/build-deb.sh, which calls it with the daemon's version; prints the two packages' paths.
#
#   systemd/build-deb-libpwflags.sh OUTDIR VERSION [ARCH]
#
# ARCH (default: the host's) is amd64 or arm64; arm64 on an amd64 host is built with Debian's cross compiler
# (gcc-aarch64-linux-gnu) against Debian 12's arm64 C library, so it runs on Debian 12 and 13.
# Needs what build-deb.sh needs, and a C compiler and groff-free gzip for the man pages.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
OUTDIR=${1:?usage: build-deb-libpwflags.sh OUTDIR VERSION}
VERSION=${2:?usage: build-deb-libpwflags.sh OUTDIR VERSION [ARCH]}
LIB=$REPO/Sources/libpwflags
# shellcheck source=systemd/cross/arch.sh
. "$REPO/systemd/cross/arch.sh"
# shellcheck source=systemd/deb-common.sh
. "$REPO/systemd/deb-common.sh" # MAINTAINER, SOURCE_DATE_EPOCH, WORK, umask 022

# The library as installed under /usr, hardened as Debian's build flags would make it, for ARCH.
ARCH=${3:-$(dpkg --print-architecture)}
MULTIARCH=$(dpkg-architecture --host-arch "$ARCH" --query DEB_HOST_MULTIARCH 2>/dev/null)
cc=${CC:-cc}
[[ $ARCH == "$(dpkg --print-architecture)" ]] || cc=$MULTIARCH-gcc
CC=$cc EXTRA_CFLAGS="-D_FORTIFY_SOURCE=2 -fstack-protector-strong -ffile-prefix-map=$REPO=." \
    "$LIB/build.sh" "$WORK/build" /usr "/usr/lib/$MULTIARCH" >/dev/null
libdir=usr/lib/$MULTIARCH
soname=libpwflags.so.0
real=$(basename "$(readlink -f "$WORK/build/lib/$soname")")
asked=$ARCH
binary_arch "$WORK/build/lib/$real" # STRIP and DPKG_ARCH for it
[[ $ARCH == "$asked" ]] || { echo "build-deb-libpwflags: $cc made an $ARCH library, not $asked" >&2; exit 1; }

# The control paragraph of one package from Sources/libpwflags/debian/control, filled in.
control() { # PACKAGE ROOT DEPENDS
    local size
    size=$(du -sk --exclude=DEBIAN "$2" | cut -f1)
    awk -v p="Package: $1" '$0 == p { on = 1 } on && /^$/ { exit } on' "$LIB/debian/control" |
        sed -e "s/@VERSION@/$VERSION/g" -e "s/@ARCH@/$ARCH/" -e "s/@SIZE@/$size/" -e "s/@DEPENDS@/$3/" \
            -e "s/@MAINTAINER@/$MAINTAINER/" -e '/^Source: /d' >"$2/DEBIAN/control"
}

docs() { # PACKAGE ROOT
    install -d "$2/usr/share/doc/$1"
    install -m 0644 "$LIB/debian/copyright" "$2/usr/share/doc/$1/copyright"
    gzip -9n <"$REPO/systemd/debian/changelog" >"$2/usr/share/doc/$1/changelog.gz"
}

finish() { # ROOT PACKAGE
    (cd "$1" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) \
        >"$1/DEBIAN/md5sums"
    chmod 0644 "$1"/DEBIAN/*
    mkdir -p "$OUTDIR"
    dpkg-deb --root-owner-group -Zgzip --build "$1" "$OUTDIR/${2}_${VERSION}_$ARCH.deb" >/dev/null
    echo "$OUTDIR/${2}_${VERSION}_$ARCH.deb"
}

# libpwflags0: the shared object, its symbols file (dpkg-shlibdeps gives a program the right minimum version),
# the ldconfig trigger.
ROOT=$WORK/libpwflags0
install -d "$ROOT/$libdir" "$ROOT/DEBIAN"
install -m 0644 "$WORK/build/lib/$real" "$ROOT/$libdir/$real"
"$STRIP" --remove-section=.comment --remove-section=.note --strip-unneeded "$ROOT/$libdir/$real"
ln -s "$real" "$ROOT/$libdir/$soname"
docs libpwflags0 "$ROOT"
sed "s/ 0\.1\.0$/ $VERSION/" "$LIB/debian/libpwflags0.symbols" >"$ROOT/DEBIAN/symbols"
echo "libpwflags 0 libpwflags0 (>= $VERSION)" >"$ROOT/DEBIAN/shlibs"
echo "activate-noawait ldconfig" >"$ROOT/DEBIAN/triggers"
mkdir -p "$WORK/src/debian"
printf 'Source: pwflagsd\n\nPackage: libpwflags0\nArchitecture: any\n' >"$WORK/src/debian/control"
shlibs=$(cd "$WORK/src" && "${DPKG_ARCH[@]}" dpkg-shlibdeps -O "$ROOT/$libdir/$real" 2>"$WORK/shlibdeps.log") ||
    { cat "$WORK/shlibdeps.log" >&2; exit 1; }
control libpwflags0 "$ROOT" "${shlibs#shlibs:Depends=}"
finish "$ROOT" libpwflags0

# libpwflags-dev: the header, the link for -lpwflags, the .pc file, the man pages (the pages several functions
# share are symbolic links, as Debian prefers to .so requests).
ROOT=$WORK/libpwflags-dev
install -d "$ROOT/usr/include" "$ROOT/$libdir/pkgconfig" "$ROOT/usr/share/man/man3" "$ROOT/DEBIAN"
install -m 0644 "$LIB/include/pwflags.h" "$ROOT/usr/include/pwflags.h"
ln -s "$soname" "$ROOT/$libdir/libpwflags.so"
install -m 0644 "$WORK/build/lib/pkgconfig/pwflags.pc" "$ROOT/$libdir/pkgconfig/pwflags.pc"
for page in "$LIB"/man/*.3; do
    name=$(basename "$page")
    if target=$(sed -n '1s|^\.so man3/||p' "$page") && [[ -n $target ]]; then
        ln -s "$target.gz" "$ROOT/usr/share/man/man3/$name.gz"
    else
        gzip -9n <"$page" >"$ROOT/usr/share/man/man3/$name.gz"
    fi
done
docs libpwflags-dev "$ROOT"
control libpwflags-dev "$ROOT" ""
finish "$ROOT" libpwflags-dev
