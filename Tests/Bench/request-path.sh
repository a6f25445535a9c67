#!/usr/bin/env bash
# The request path's measure (docs/performance.md, "The request path"): a `get` timed from outside by the lean
# C client, against two floors the same client times in the same run: the blocking echo (`pwflags-bench
# --serve-echo`, a thread per connection) and the epoll echo (one loop, no work per line).
#
#   Tests/Bench/request-path.sh [--rounds R] [--calls N] [--instructions] DIR [DIR...]
#
# Each DIR holds a release build (pwflagsd and pwflags-bench); the first DIR's bench serves the blocking floor.
# The rounds alternate every server, first unpinned, then with every process on one CPU (a single-core device);
# it prints each round's p50s and the median of each server's ratio to the blocking floor. --instructions also
# counts the user-space instructions of one `get` in each daemon with callgrind (10,000 gets after a warm-up;
# deterministic, unlike the times). Needs gcc, python3, taskset, and valgrind for --instructions.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
rounds=9 calls=50000 instructions=no
while (($# > 0)); do
    case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --instructions) instructions=yes; shift ;;
    --*) echo "request-path.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
(($# > 0)) || { echo "usage: request-path.sh [--rounds R] [--calls N] [--instructions] DIR [DIR...]" >&2; exit 2; }

work=$(mktemp -d /tmp/request-path.XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

gcc -O2 -Wall -Wextra -Werror -o "$work/lean-get" "$HERE/lean-get.c"
gcc -O2 -Wall -Wextra -Werror -o "$work/epoll-echo" "$HERE/epoll-echo.c"
cp "$REPO/config/demo-flags.json" "$work/flags.json"

# Writes DIR's daemon configuration for socket SOCKET; echoes the path.
configure() {
    local name=$1 socket=$2
    mkdir -m 700 "$work/state-$name"
    cat >"$work/$name.conf" <<EOF
[FeatureFlags]
LocalFlagsFile=$work/flags.json
[Daemon]
SocketPath=$socket
StateDirectory=$work/state-$name
LogLevel=notice
[DBus]
Bus=no
EOF
    echo "$work/$name.conf"
}

# Waits up to 10 s for each socket given to accept connections.
await_sockets() {
    local socket deadline=$((SECONDS + 10))
    for socket in "$@"; do
        until [ -S "$socket" ] && python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' "$socket" 2>/dev/null; do
            ((SECONDS < deadline)) || { echo "request-path.sh: nothing serves $socket" >&2; exit 1; }
            sleep 0.1
        done
    done
}

names=(blocking-echo epoll-echo) sockets=("$work/blocking.sock" "$work/epoll.sock")
"$1/pwflags-bench" --serve-echo "$work/blocking.sock" & pids+=($!)
"$work/epoll-echo" "$work/epoll.sock" & pids+=($!)
index=0
for dir in "$@"; do
    socket="$work/daemon-$index.sock"
    "$dir/pwflagsd" --config "$(configure "daemon-$index" "$socket")" >"$work/daemon-$index.log" 2>&1 & pids+=($!)
    names+=("$dir") sockets+=("$socket")
    index=$((index + 1))
done
await_sockets "${sockets[@]}"

# Prints R rounds of every server's p50 (through RUN, the client's prefix), then the medians.
measure() {
    local run=$1 round socket
    for ((round = 1; round <= rounds; round++)); do
        for socket in "${sockets[@]}"; do
            $run "$work/lean-get" "$socket" "$calls" | awk '{printf "%s ", $2}'
        done
        echo
    done | python3 -c '
import statistics, sys
names = sys.argv[1:]
rows = [[float(x) for x in line.split()] for line in sys.stdin if line.strip()]
for row in rows:
    print("  " + "  ".join("%.2f" % x for x in row) + "  |  " + "  ".join("%.2fx" % (x / row[0]) for x in row[1:]))
for column, name in enumerate(names):
    p50 = statistics.median(row[column] for row in rows)
    ratios = sorted(row[column] / row[0] for row in rows)
    print("  %-40s p50 median %6.2f us   against the blocking echo: median %.2fx (%.2fx-%.2fx)" % (
        name, p50, statistics.median(ratios), ratios[0], ratios[-1]))
' "${names[@]}"
}

echo "# p50 in us, per round: ${names[*]}"
echo "unpinned, $rounds rounds of $calls calls:"
measure ""
cpu=$(($(nproc) - 1))
for pid in "${pids[@]}"; do
    for task in /proc/"$pid"/task/*; do taskset -p -c "$cpu" "${task##*/}" >/dev/null; done
done
echo "every process on CPU $cpu:"
measure "taskset -c $cpu"

if [ "$instructions" = yes ]; then
    echo "user-space instructions per get (callgrind):"
    index=0
    for dir in "$@"; do
        # Valgrind's reader stops at the Swift toolchain's DWARF: a copy without the debug sections.
        objcopy --strip-debug "$dir/pwflagsd" "$work/pwflagsd-$index"
        socket="$work/callgrind-$index.sock"
        valgrind --tool=callgrind --callgrind-out-file="$work/callgrind-$index.out" \
            "$work/pwflagsd-$index" --config "$(configure "callgrind-$index" "$socket")" \
            >"$work/callgrind-$index.log" 2>&1 &
        grind=$!
        pids+=("$grind")
        await_sockets "$socket"
        "$work/lean-get" "$socket" 2000 >/dev/null
        callgrind_control -z "$grind" >/dev/null 2>&1
        "$work/lean-get" "$socket" 10000 >/dev/null
        callgrind_control -d "$grind" >/dev/null 2>&1
        kill "$grind"
        wait "$grind" 2>/dev/null || true
        total=$(awk '/^summary:/ {print $2; exit}' "$work/callgrind-$index.out.1")
        echo "  $dir: $((total / 11000)) instructions per get"
        index=$((index + 1))
    done
fi
