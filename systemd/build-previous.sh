#!/usr/bin/env bash
# Builds the pwflagsd package of an earlier commit, the version a device rolls back to, for the rollback checks of
# systemd/test-nspawn.sh; prints its path. Made once per commit and kept.
#
#   systemd/build-previous.sh [COMMIT]     (amd64; the binaries are that commit's static release build)
#
# COMMIT defaults to PREVIOUS below: the release a device on this version rolls back to. Raise it with each release.
#
# The package is that commit's own: its sources (git archive, into a scratch folder; the repository and its
# worktrees are left alone), built with its own systemd/build-release.sh (the pwflagsd product alone: the package
# ships that one binary, pwflags is a link to it) and packaged by its own systemd/build-deb.sh with
# PWFLAGSD_DEB_VERSION=RELEASE~prev.COMMIT, RELEASE being that commit's: lower than the release itself, so that
# installing the current package over it is an upgrade, and installing it again a downgrade.
#
# Kept in $PWFLAGSD_PREVIOUS_CACHE (default /var/cache/pwflagsd-test/previous)/COMMIT-ARCH, the full commit id in
# the name: a later run prints the kept package at once (a clean release build of pwflagsd takes about 9 minutes
# on the 2-core CI machine). Delete the folder to build it again. Two runs at once build it once (flock).
# Needs what systemd/build-release.sh and build-deb.sh need, and git.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
# 0.1.0, the first release: the last version without state formats (docs/operations.md, Rolling back).
PREVIOUS=9b88740
COMMIT=$(git -C "$REPO" rev-parse --verify "${1:-$PREVIOUS}^{commit}")
ARCH=$(dpkg --print-architecture)
CACHE=${PWFLAGSD_PREVIOUS_CACHE:-/var/cache/pwflagsd-test/previous}/$COMMIT-$ARCH
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9

kept() { find "$CACHE" -maxdepth 1 -name "pwflagsd_*_$ARCH.deb" | head -1; }
if [[ -n $(kept) ]]; then
    kept
    exit 0
fi

WORK=$(mktemp -d /tmp/pwflagsd-previous.XXXXXX)
trap 'rm -rf --one-file-system "$WORK"' EXIT
git -C "$REPO" archive --format=tar "$COMMIT" | tar -x -C "$WORK" --one-top-level=src
RELEASE=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' "$WORK/src/Sources/FlagsCore/Version.swift")
[[ -n $RELEASE ]] || { echo "build-previous: no version in $COMMIT's Sources/FlagsCore/Version.swift" >&2; exit 1; }
VERSION="$RELEASE~prev.$(git -C "$REPO" rev-parse --short=7 "$COMMIT")"
started=$SECONDS
"$WORK/src/systemd/build-release.sh" --product pwflagsd --scratch-path "$WORK/build" >"$WORK/build.log" 2>&1 ||
    { tail -40 "$WORK/build.log" >&2; echo "build-previous: the release build of $COMMIT failed" >&2; exit 1; }
echo "build-previous: $COMMIT's release build took $((SECONDS - started)) s" >&2
# The source folder is no repository: its packages are stamped with the commit's own time.
SOURCE_DATE_EPOCH=$(git -C "$REPO" log -1 --format=%ct "$COMMIT") PWFLAGSD_DEB_VERSION=$VERSION \
    "$WORK/src/systemd/build-deb.sh" "$WORK/build/release" "$WORK/deb" >"$WORK/deb.log" 2>&1 ||
    { cat "$WORK/deb.log" >&2; echo "build-previous: $COMMIT's build-deb.sh failed" >&2; exit 1; }
package=$WORK/deb/pwflagsd_${VERSION}_$ARCH.deb
[[ -f $package ]] || { echo "build-previous: $COMMIT's build-deb.sh made no $(basename "$package")" >&2; exit 1; }
# Renamed into place: a run stopped half-way leaves no package that looks kept.
cp "$package" "$CACHE/.new.deb"
mv "$CACHE/.new.deb" "$CACHE/$(basename "$package")"
kept
