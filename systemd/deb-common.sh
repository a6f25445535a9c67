# shellcheck shell=bash
# shellcheck disable=SC2034 # the variables are the caller's
# Sourced by the scripts that build one part of the packages (build-deb-python.sh, build-deb-libpwflags.sh),
# once they set REPO: the start every reproducible package build shares.
#
#   . "$REPO/systemd/deb-common.sh"
#
# Sets MAINTAINER (systemd/debian/control's), exports SOURCE_DATE_EPOCH (the caller's, else the last commit's
# time, else now) for the packaged files' times, makes WORK, a temporary folder removed on exit, and sets
# umask 022 so that the packaged files' modes do not depend on the caller's.
MAINTAINER=$(sed -n 's/^Maintainer: //p' "$REPO/systemd/debian/control")
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
umask 022
