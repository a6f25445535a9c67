#!/bin/sh
# Builds libpwflags into OUT: OUT/lib/libpwflags.so{,.0,.0.1.0}, OUT/include/pwflags.h, OUT/lib/pkgconfig/pwflags.pc.
#   Sources/libpwflags/build.sh OUT [PREFIX [LIBDIR]]
# CC (default cc) and EXTRA_CFLAGS (for example -fsanitize=address) are read from the environment. The .pc file
# points at OUT unless PREFIX (and LIBDIR, default PREFIX/lib) say where the library will be installed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build.sh OUT [PREFIX [LIBDIR]]}
mkdir -p "$out/lib/pkgconfig" "$out/include" "$out/obj"
out=$(cd "$out" && pwd)
prefix=${2:-$out}
libdir=${3:-$prefix/lib}
version=0.1.0
cc=${CC:-cc}
cflags="-std=c11 -O2 -g -fPIC -fvisibility=hidden -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -I$here/include ${EXTRA_CFLAGS:-}"
objects=
for source in "$here"/src/*.c; do
    object="$out/obj/$(basename "$source" .c).o"
    # shellcheck disable=SC2086
    $cc $cflags -c "$source" -o "$object"
    objects="$objects $object"
done
# -z defs proves the library needs nothing but libc; a sanitizer's runtime is the program's to link, not ours.
defs=-Wl,-z,defs
case ${EXTRA_CFLAGS:-} in *-fsanitize=*) defs= ;; esac
# shellcheck disable=SC2086
$cc -shared -o "$out/lib/libpwflags.so.$version" $objects -Wl,-soname,libpwflags.so.0 \
    -Wl,--version-script="$here/libpwflags.map" $defs -Wl,-z,relro -Wl,-z,now -Wl,--as-needed \
    -lpthread ${EXTRA_CFLAGS:-}
ln -sf "libpwflags.so.$version" "$out/lib/libpwflags.so.0"
ln -sf libpwflags.so.0 "$out/lib/libpwflags.so"
cp "$here/include/pwflags.h" "$out/include/pwflags.h"
sed -e "s|@PREFIX@|$prefix|" -e "s|@LIBDIR@|$libdir|" -e "s|@INCLUDEDIR@|$prefix/include|" \
    -e "s|@VERSION@|$version|" "$here/libpwflags.pc.in" >"$out/lib/pkgconfig/pwflags.pc"
