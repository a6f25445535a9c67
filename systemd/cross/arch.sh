# shellcheck shell=bash
# shellcheck disable=SC2034 # the variables are the caller's
# Sourced by the package scripts: which Debian architecture a built binary is for, and the tools that handle it.
#
#   . systemd/cross/arch.sh; binary_arch FILE
#
# Sets ARCH (amd64, arm64), MULTIARCH (its library triplet), STRIP and CC (the host's own tools for a native
# binary, Debian's cross tools gcc-aarch64-linux-gnu and binutils-aarch64-linux-gnu for an arm64 one on an amd64
# host), and DPKG_ARCH, a prefix that runs a dpkg-dev tool (dpkg-shlibdeps) for that architecture: it finds the
# libraries of a foreign one through the host's multiarch packages (libc6:arm64 and the rest, which .ci/run
# installs).
binary_arch() {
    local machine
    machine=$(LC_ALL=C readelf --file-header "$1" | sed -n 's/^ *Machine: *//p')
    case $machine in
        *X86-64*) ARCH=amd64 MULTIARCH=x86_64-linux-gnu ;;
        *AArch64*) ARCH=arm64 MULTIARCH=aarch64-linux-gnu ;;
        *) echo "arch.sh: $1 is for '$machine', which no package here is built for" >&2; return 1 ;;
    esac
    if [[ $ARCH == "$(dpkg --print-architecture)" ]]; then
        STRIP=strip CC=${CC:-cc} DPKG_ARCH=()
    else
        STRIP=$MULTIARCH-strip CC=$MULTIARCH-gcc DPKG_ARCH=(dpkg-architecture --host-arch "$ARCH" --command)
    fi
}
