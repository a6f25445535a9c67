#!/usr/bin/env bash
# Builds the Debian package pwflagsd_VERSION_ARCH.deb from the static release build, then the C library's
# libpwflags0 and libpwflags-dev of the same version (systemd/build-deb-libpwflags.sh).
#
#   systemd/build-deb.sh [BINDIR [OUTDIR]]    (BINDIR defaults to .build/release, OUTDIR to .build/deb)
#
# BINDIR must hold pwflagsd from systemd/build-release.sh (static Swift runtime, -z relro -z now, no RUNPATH);
# the package is refused otherwise; /usr/bin/pwflags is a link to it (the binary runs the CLI under that name).
# VERSION is PWFlagsVersion.current (Sources/FlagsCore/Version.swift), which must be the newest entry of
# systemd/debian/changelog, the package's changelog. PWFLAGSD_DEB_VERSION builds another version (the container
# test builds a higher one to test upgrades): its changelog then starts with an entry saying so. The Maintainer is
# the one in systemd/debian/control. Prints the packages' paths, the daemon's first.
# Needs dpkg-dev (dpkg-deb, dpkg-shlibdeps, dpkg-parsechangelog), binutils (strip, readelf), gzip; runs as any
# user (fakeroot-free: the archive's owners are set with dpkg-deb --root-owner-group).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
BINDIR=$(cd "${1:-$REPO/.build/release}" && pwd)
OUTDIR=${2:-$REPO/.build/deb}
RELEASE=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' "$REPO/Sources/FlagsCore/Version.swift")
[[ -n $RELEASE ]] || { echo "build-deb: no version in Sources/FlagsCore/Version.swift" >&2; exit 1; }
CHANGELOG=$REPO/systemd/debian/changelog
logged=$(dpkg-parsechangelog -l "$CHANGELOG" -S Version)
[[ $logged == "$RELEASE" ]] || {
    echo "build-deb: the newest entry of systemd/debian/changelog is $logged, the release is $RELEASE" >&2
    exit 1
}
VERSION=${PWFLAGSD_DEB_VERSION:-$RELEASE}
# The architecture is the binary's: an arm64 pwflagsd from systemd/build-arm64.sh makes the arm64 packages.
# shellcheck source=systemd/cross/arch.sh
. "$REPO/systemd/cross/arch.sh"
binary_arch "$BINDIR/pwflagsd"
# The one place the Maintainer is written: the project, as every package of it names it.
MAINTAINER=$(sed -n 's/^Maintainer: //p' "$REPO/systemd/debian/control")
# Reproducible timestamps: the last commit's date, else now.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH

for binary in pwflagsd; do
    [[ -x $BINDIR/$binary ]] || { echo "build-deb: $BINDIR/$binary is missing" >&2; exit 1; }
    # Hardening Debian expects of /usr/bin, and no RUNPATH of $ORIGIN (the loader would search /usr/bin).
    dynamic=$(readelf --dynamic "$BINDIR/$binary")
    if grep -qE '\((RUNPATH|RPATH)\)' <<<"$dynamic" || ! grep -qE '\(FLAGS(_1)?\).*\bNOW\b' <<<"$dynamic" ||
        ! grep -qE '\(RELR\)' <<<"$dynamic" || ! readelf --program-headers "$BINDIR/$binary" | grep GNU_RELRO >/dev/null; then
        echo "build-deb: $BINDIR/$binary has a RUNPATH or lacks -z relro -z now -z pack-relative-relocs;" \
            "build it with systemd/build-release.sh" >&2
        exit 1
    fi
done

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ROOT=$WORK/root
umask 022

# Files: one binary stripped as dh_strip does, pwflags a link to it (the binary runs the CLI when started under
# that name, as busybox does: one copy of the Swift runtime instead of two); units; sysusers; configuration; demo flags; docs.
install -d "$ROOT/usr/bin" "$ROOT/usr/lib/systemd/system" "$ROOT/usr/lib/sysusers.d" "$ROOT/etc/pwflagsd" \
    "$ROOT/usr/share/pwflagsd" "$ROOT/usr/share/doc/pwflagsd" "$ROOT/usr/share/bash-completion/completions" \
    "$ROOT/usr/share/man/man1" "$ROOT/usr/share/man/man5" "$ROOT/usr/share/man/man8" "$ROOT/DEBIAN"
install -m 0755 "$BINDIR/pwflagsd" "$ROOT/usr/bin/pwflagsd"
"$STRIP" --remove-section=.comment --remove-section=.note --strip-unneeded "$ROOT/usr/bin/pwflagsd"
ln -s pwflagsd "$ROOT/usr/bin/pwflags"
install -m 0644 "$REPO"/systemd/pwflagsd.socket "$REPO"/systemd/pwflagsd.service "$REPO"/systemd/pwflagsd@.socket \
    "$REPO"/systemd/pwflagsd@.service "$REPO"/systemd/pwflagsd-ofrep.socket "$REPO"/systemd/pwflagsd-varlink.socket \
    "$ROOT/usr/lib/systemd/system/"
install -m 0644 "$REPO/systemd/pwflagsd.sysusers.conf" "$ROOT/usr/lib/sysusers.d/pwflagsd.conf"
# A desktop user's own daemon (systemctl --user), on the user's session bus.
install -d "$ROOT/usr/lib/systemd/user"
install -m 0644 "$REPO"/systemd/user/pwflagsd.socket "$REPO"/systemd/user/pwflagsd.service "$ROOT/usr/lib/systemd/user/"
# The daemon on D-Bus (docs/dbus.md): the system bus's policy, activation on the system and session buses, and the
# interface's introspection. The dbus package's trigger reloads the bus's configuration when these change.
install -d "$ROOT/usr/share/dbus-1/system.d" "$ROOT/usr/share/dbus-1/system-services" "$ROOT/usr/share/dbus-1/services" \
    "$ROOT/usr/share/dbus-1/interfaces"
install -m 0644 "$REPO/systemd/dbus/io.github.pwflagsd.Flags1.conf" "$ROOT/usr/share/dbus-1/system.d/"
install -m 0644 "$REPO/systemd/dbus/io.github.pwflagsd.Flags1.service" "$ROOT/usr/share/dbus-1/system-services/"
install -m 0644 "$REPO/systemd/dbus/io.github.pwflagsd.Flags1.user.service" \
    "$ROOT/usr/share/dbus-1/services/io.github.pwflagsd.Flags1.service"
install -m 0644 "$REPO/systemd/dbus/io.github.pwflagsd.Flags1.xml" "$ROOT/usr/share/dbus-1/interfaces/"
install -d "$ROOT/usr/share/lintian/overrides"
install -m 0644 "$REPO/systemd/debian/lintian-overrides" "$ROOT/usr/share/lintian/overrides/pwflagsd"
install -m 0644 "$REPO/config/demo-flags.json" "$ROOT/usr/share/pwflagsd/demo-flags.json"
# The Varlink interface's description, the same text the daemon's GetInterfaceDescription returns (docs/varlink.md).
install -m 0644 "$REPO/systemd/io.github.pwflagsd.Flags.varlink" "$ROOT/usr/share/pwflagsd/"
install -m 0644 "$REPO/systemd/completion/pwflags" "$ROOT/usr/share/bash-completion/completions/pwflags"

# The shipped configuration is the reference file with the demo flags switched on: out of the box the daemon
# serves them, with no account and no network, until ApplicationCode= is set (ApplicationCode wins).
sed -e 's|^#  Install it as /etc/pwflagsd/pwflagsd.conf, or leave it alone|#  Leave this file alone|' \
    -e "s|^#  See pwflagsd.conf(5), or docs/configuration.md in the source tree, for the details.|#  See pwflagsd.conf(5) for the details.|" \
    -e 's|^#LocalFlagsFile=$|#LocalFlagsFile=\n# The package serves its demo flags until ApplicationCode= is set; remove this line to serve nothing.\nLocalFlagsFile=/usr/share/pwflagsd/demo-flags.json|' \
    "$REPO/config/pwflagsd.conf" >"$ROOT/etc/pwflagsd/pwflagsd.conf"
grep -q '^LocalFlagsFile=/usr/share/pwflagsd/demo-flags.json$' "$ROOT/etc/pwflagsd/pwflagsd.conf" ||
    { echo "build-deb: config/pwflagsd.conf has no #LocalFlagsFile= line to switch on" >&2; exit 1; }
# The device has no source tree: the pointer to docs/ must have been replaced by the man page alone.
if grep -q 'docs/configuration.md' "$ROOT/etc/pwflagsd/pwflagsd.conf"; then
    echo "build-deb: config/pwflagsd.conf's line pointing at docs/configuration.md was not replaced" >&2
    exit 1
fi
chmod 0644 "$ROOT/etc/pwflagsd/pwflagsd.conf"

for page in pwflags.1 pwflagsd.conf.5 pwflagsd.8; do
    gzip -9n <"$REPO/systemd/man/$page" >"$ROOT/usr/share/man/man${page##*.}/$page.gz"
done
install -m 0644 "$REPO/systemd/debian/copyright" "$ROOT/usr/share/doc/pwflagsd/copyright"
# Units that gate a service on a flag (ExecCondition=) and follow it (pwflags listen --exec), to copy.
install -d "$ROOT/usr/share/doc/pwflagsd/examples"
install -m 0644 "$REPO"/systemd/examples/*.service "$ROOT/usr/share/doc/pwflagsd/examples/"
# The changelog of the repository; a build of another version says first what it is.
{
    if [[ $VERSION != "$RELEASE" ]]; then
        printf 'pwflagsd (%s) UNRELEASED; urgency=medium\n\n' "$VERSION"
        printf '  * Not a release: %s built as %s (PWFLAGSD_DEB_VERSION), commit %s.\n\n' "$RELEASE" "$VERSION" \
            "$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
        printf ' -- %s  %s\n\n' "$MAINTAINER" "$(date -u -R -d "@$SOURCE_DATE_EPOCH")"
    fi
    cat "$CHANGELOG"
} | gzip -9n >"$ROOT/usr/share/doc/pwflagsd/changelog.gz"

# Maintainer scripts and metadata. Depends: what dpkg-shlibdeps finds the binaries link (libc6, libsystemd0,
# ...); libcurl4, which the daemon opens with dlopen at its first request (so dpkg-shlibdeps cannot see it; 7.83
# brought curl_easy_header); systemd (units, sysusers, DynamicUser=) and init-system-helpers (deb-systemd-invoke).
install -m 0755 "$REPO"/systemd/debian/postinst "$REPO"/systemd/debian/prerm "$REPO"/systemd/debian/postrm "$ROOT/DEBIAN/"
echo /etc/pwflagsd/pwflagsd.conf >"$ROOT/DEBIAN/conffiles"
chmod 0644 "$ROOT/DEBIAN/conffiles"
mkdir -p "$WORK/src/debian"
printf 'Source: pwflagsd\n\nPackage: pwflagsd\nArchitecture: any\n' >"$WORK/src/debian/control"
shlibs=$(cd "$WORK/src" && "${DPKG_ARCH[@]}" dpkg-shlibdeps -O "$ROOT/usr/bin/pwflagsd" 2>"$WORK/shlibdeps.log") ||
    { cat "$WORK/shlibdeps.log" >&2; exit 1; }
depends="${shlibs#shlibs:Depends=}, libcurl4 (>= 7.83.0), systemd (>= 252), init-system-helpers (>= 1.54~)"
# Packed relocations need glibc 2.36's loader (the binary requires GLIBC_ABI_DT_RELR), which dpkg-shlibdeps does
# not count: it reads the symbols a binary uses, not the versions it requires.
if readelf --version-info "$ROOT/usr/bin/pwflagsd" | grep GLIBC_ABI_DT_RELR >/dev/null; then
    depends=$(sed -E 's/libc6 \(>= 2\.(3[0-5]|[12][0-9]|[0-9])\)/libc6 (>= 2.36)/' <<<"$depends")
fi
size=$(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)
sed -e "s/@VERSION@/$VERSION/" -e "s/@ARCH@/$ARCH/" -e "s/@SIZE@/$size/" -e "s/@DEPENDS@/$depends/" \
    "$REPO/systemd/debian/control" >"$ROOT/DEBIAN/control"
(cd "$ROOT" && find . -type f ! -path './DEBIAN/*' ! -path './etc/*' -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) \
    >"$ROOT/DEBIAN/md5sums"
chmod 0644 "$ROOT/DEBIAN/md5sums" "$ROOT/DEBIAN/control"

mkdir -p "$OUTDIR"
package="$OUTDIR/pwflagsd_${VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group -Zgzip --build "$ROOT" "$package" >/dev/null
echo "$package"
# The C client library's two packages, of the same version, on the lines after the daemon's, then the Python
# client's (Architecture: all).
"$REPO/systemd/build-deb-libpwflags.sh" "$OUTDIR" "$VERSION" "$ARCH"
"$REPO/systemd/build-deb-python.sh" "$OUTDIR" "$VERSION"
