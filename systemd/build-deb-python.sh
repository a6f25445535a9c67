#!/usr/bin/env bash
# Builds python3-pwflags_VERSION_all.deb (the Python client, Sources/python) with dpkg-deb; prints its path.
#
#   systemd/build-deb-python.sh OUTDIR VERSION
#
# The package installs the pure-Python `pwflags` into /usr/lib/python3/dist-packages with its dist-info (so
# importlib.metadata and pip see it), and byte-compiles it with py3compile on install, as Debian's Python
# packages do. Needs nothing but coreutils, gzip and dpkg-deb: no network, no build backend.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
OUTDIR=${1:?usage: build-deb-python.sh OUTDIR VERSION}
VERSION=${2:?usage: build-deb-python.sh OUTDIR VERSION}
SRC=$REPO/Sources/python
PACKAGE=python3-pwflags
# shellcheck source=systemd/deb-common.sh
. "$REPO/systemd/deb-common.sh" # MAINTAINER, SOURCE_DATE_EPOCH, WORK, umask 022

ROOT=$WORK/$PACKAGE
SITE=$ROOT/usr/lib/python3/dist-packages
# The Python version is the package's, without a Debian revision (PEP 440 has no "-").
PYVERSION=${VERSION%%-*}
DISTINFO=$SITE/pwflags-$PYVERSION.dist-info
install -d "$SITE/pwflags" "$DISTINFO" "$ROOT/DEBIAN" "$ROOT/usr/share/doc/$PACKAGE"
for file in "$SRC"/pwflags/*.py "$SRC/pwflags/py.typed"; do
    install -m 0644 "$file" "$SITE/pwflags/$(basename "$file")"
done
cat >"$DISTINFO/METADATA" <<METADATA
Metadata-Version: 2.1
Name: pwflags
Version: $PYVERSION
Summary: Python client of pwflagsd, the Pushwoosh feature flags daemon
License: Apache-2.0
Requires-Python: >=3.11
Provides-Extra: openfeature
Requires-Dist: openfeature-sdk==0.10.0; extra == "openfeature"
METADATA
echo "pwflags" >"$DISTINFO/top_level.txt"
echo "debian" >"$DISTINFO/INSTALLER"
install -m 0644 "$SRC/debian/copyright" "$ROOT/usr/share/doc/$PACKAGE/copyright"
gzip -9n <"$REPO/systemd/debian/changelog" >"$ROOT/usr/share/doc/$PACKAGE/changelog.gz"
install -m 0644 "$REPO/docs/python.md" "$ROOT/usr/share/doc/$PACKAGE/python.md"
find "$ROOT/usr" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

# Byte-compiled on install and cleaned on removal, by python3-minimal's tools.
cat >"$ROOT/DEBIAN/postinst" <<'SCRIPT'
#!/bin/sh
set -e
if [ "$1" = configure ] && command -v py3compile >/dev/null 2>&1; then
    py3compile -p python3-pwflags
fi
SCRIPT
cat >"$ROOT/DEBIAN/prerm" <<'SCRIPT'
#!/bin/sh
set -e
if command -v py3clean >/dev/null 2>&1; then
    py3clean -p python3-pwflags
else
    find /usr/lib/python3/dist-packages/pwflags -name __pycache__ -type d -exec rm -rf {} + 2>/dev/null || true
fi
SCRIPT
chmod 0755 "$ROOT/DEBIAN/postinst" "$ROOT/DEBIAN/prerm"

size=$(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)
sed -e "s/@VERSION@/$VERSION/" -e "s/@SIZE@/$size/" -e "s/@MAINTAINER@/$MAINTAINER/" -e '/^Source: /d' \
    "$SRC/debian/control" >"$ROOT/DEBIAN/control"
(cd "$ROOT" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) \
    >"$ROOT/DEBIAN/md5sums"
chmod 0644 "$ROOT/DEBIAN/control" "$ROOT/DEBIAN/md5sums"
mkdir -p "$OUTDIR"
dpkg-deb --root-owner-group -Zgzip --build "$ROOT" "$OUTDIR/${PACKAGE}_${VERSION}_all.deb" >/dev/null
echo "$OUTDIR/${PACKAGE}_${VERSION}_all.deb"
