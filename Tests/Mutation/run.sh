#!/usr/bin/env bash
# The mutation check (docs/development.md): puts each mutant of Tests/Mutation/mutants.tsv into the product code,
# one at a time, builds, runs the suites named beside it, and reports whether they caught it (killed) or not
# (survived). The mutated file is always restored, whatever happens (a trap); the build is brought back to the
# tree at the end.
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
logs=.build/mutation
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
    cp "$file" "$backup"
    mutated=$file
    sed -i -e "$script" "$file"
    if cmp -s "$file" "$backup"; then
        restore
        results+=("$(printf '%-32s NOT APPLIED (the code moved: update its line in %s)' "$name" "$list")")
        failed=1
        continue
    fi
    if [[ $mode == check ]]; then
        restore
        results+=("$(printf '%-32s applies' "$name")")
        continue
    fi
    echo "== $name: $about" >&2
    log="$logs/$name.log"
    # No -warnings-as-errors: a mutant may leave a variable unused, and it is the tests that must catch it.
    if ! swift build --build-tests >"$log" 2>&1; then
        restore
        results+=("$(printf '%-32s DOES NOT BUILD (see %s)' "$name" "$log")")
        failed=1
        continue
    fi
    started=$SECONDS
    timeout --kill-after=30 "$timeout_seconds" \
        swift test --skip-build --no-parallel --filter "$suites" >>"$log" 2>&1
    status=$?
    restore
    took=$((SECONDS - started))
    caught=$(grep -E '✘ Test [a-zA-Z]+\(' "$log" | sed -E 's/.*✘ Test ([a-zA-Z]+)\(.*/\1/' | sort -u | head -4 |
        paste -sd, -)
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

if [[ $mode == run && ${#results[@]} -gt 0 ]]; then
    echo "== rebuilding the unmutated tree" >&2
    swift build --build-tests >"$logs/restore.log" 2>&1 || echo "the unmutated tree does not build: $logs/restore.log" >&2
fi
printf '%s\n' "${results[@]}"
exit "$failed"
