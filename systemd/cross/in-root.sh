#!/usr/bin/env bash
# Runs a command in the Debian 13 build root that systemd/cross/make-sdk.sh makes (Swift 6.0.3), with this
# repository at /src/pwflagsd:
#
#   systemd/cross/in-root.sh COMMAND [ARGUMENT...]     (as root)
#
# The mounts it needs (proc, dev, the repository) are made in a mount namespace of the command's own, so they go
# with it, and two commands at once do not undo each other's. The root is made first when it is missing.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
(($# > 0)) || { echo "usage: in-root.sh COMMAND [ARGUMENT...]" >&2; exit 2; }
ROOT=$("$REPO/systemd/cross/make-sdk.sh")
mkdir -p "$ROOT/src/pwflagsd"
# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare --mount --propagation private -- bash -c '
    set -e
    root=$1 repo=$2
    shift 2
    mount -t proc proc "$root/proc"
    mount --bind /dev "$root/dev"
    mount --bind "$repo" "$root/src/pwflagsd"
    exec chroot "$root" "$@"' in-root "$ROOT" "$REPO" "$@"
