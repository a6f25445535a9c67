#!/usr/bin/env bash
# The mutation check (docs/development.md): puts each mutant of Tests/Mutation/mutants.tsv into the product code,
# one at a time, builds, runs the suites named beside it, and reports whether they caught it (killed) or not
# (survived). The mutated file is always restored, whatever happens (a trap). It builds in a directory of its own,
# .build-mutation (the first run builds everything once there; each mutant then costs an incremental build), so
# that the usual .build keeps its flags and is never left holding a mutant.
#
#   Tests/Mutation/run.sh                 every mutant
#   Tests/Mutation/run.sh NAME...         the mutants named
#   Tests/Mutation/run.sh --check         only checks that every mutant still applies (no build, seconds)
#   Tests/Mutation/run.sh --list          the mutants' names and what each breaks
#
# Exit status 0 when every mutant run was killed, 1 otherwise. PWFLAGS_MUTANT_TIMEOUT (seconds, default 1500)
# bounds one mutant's test run: a run past it is reported "hung", which is a defect of the suite (every test has
# a time limit and every wait a deadline), not a kill.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="/opt/swift/usr/bin:$PATH"

list=Tests/Mutation/mutants.tsv
scratch=.build-mutation
logs=$scratch/logs
timeout_seconds=${PWFLAGS_MUTANT_TIMEOUT:-1500}
mode=run
if [[ ${1:-} == --check || ${1:-} == --list ]]; then
    mode=${1#--}
    shift
fi
selected=("$@")

backup=$(mktemp)
mutated=""
restore() {
    if [[ -n $mutated ]]; then
        cp "$backup" "$mutated"
        mutated=""
    fi
}
trap 'restore; rm -f "$backup"' EXIT
trap 'exit 130' INT TERM

wanted() {
    [[ ${#selected[@]} -eq 0 ]] && return 0
    local name
    for name in "${selected[@]}"; do [[ $name == "$1" ]] && return 0; done
    return 1
}

mkdir -p "$logs"
results=()
failed=0
while IFS=$'\t' read -r name file script suites about; do
    [[ -z $name || $name == \#* ]] && continue
    wanted "$name" || continue
    if [[ $mode == list ]]; then
        printf '%-32s %s\n' "$name" "$about"
        continue
    fi
    # Whether the script still changes the file, found on a copy: --check never touches the tree.
    if [[ ! -f $file ]] || sed -e "$script" "$file" | cmp -s - "$file"; then
        results+=("$(printf '%-32s NOT APPLIED (the code moved: update its line in %s)' "$name" "$list")")
        failed=1
        continue
    fi
    if [[ $mode == check ]]; then
        results+=("$(printf '%-32s applies' "$name")")
        continue
    fi
    cp "$file" "$backup"
    mutated=$file
    sed -i -e "$script" "$file"
    echo "== $name: $about" >&2
    log="$logs/$name.log"
    # No -warnings-as-errors: a mutant may leave a variable unused, and it is the tests that must catch it.
    if ! swift build --build-tests --scratch-path "$scratch" >"$log" 2>&1; then
        restore
        results+=("$(printf '%-32s DOES NOT BUILD (see %s)' "$name" "$log")")
        failed=1
        continue
    fi
    started=$SECONDS
    timeout --kill-after=30 "$timeout_seconds" \
        swift test --skip-build --scratch-path "$scratch" --no-parallel --filter "$suites" >>"$log" 2>&1
    status=$?
    restore
    took=$((SECONDS - started))
    # The tests that failed, by the name Swift Testing prints (a display name in quotes, or the function).
    caught=$(grep -E '^✘ Test .* failed after' "$log" | grep -v '^✘ Test run with' | sed -E 's/^✘ Test (.*) (with [0-9]+ test cases? )?failed after.*/\1/' |
        cut -c1-70 | head -3 | paste -sd';' -)
    case $status in
    0)
        results+=("$(printf '%-32s SURVIVED (%s passed, %d s)' "$name" "$suites" "$took")")
        failed=1
        ;;
    124 | 137)
        results+=("$(printf '%-32s HUNG past %d s (a test without a deadline: see %s)' "$name" "$timeout_seconds" "$log")")
        failed=1
        ;;
    *) results+=("$(printf '%-32s killed in %d s by %s' "$name" "$took" "${caught:-a failure (see $log)}")") ;;
    esac
done <"$list"

printf '%s\n' "${results[@]}"
exit "$failed"
