#!/usr/bin/env bash
# Builds the client library's API documentation (Sources/FeatureFlags/FeatureFlags.docc and the documentation
# comments of FeatureFlags and FeatureFlagsCompat) with the docc binary that ships beside the toolchain's swift:
# no package plugin is needed. The symbol graphs come from a build of its own (.build/docs/build, so the main
# build's flags stay as they are); docc runs with --warnings-as-errors, so an unresolved symbol link, a bad
# topic or a missing page fails the script, and CI with it.
#
# Usage: systemd/build-docs.sh [OUTDIR]    (default: .build/docs)
# Writes OUTDIR/FeatureFlags.doccarchive (the catalog and the library's API) and OUTDIR/FeatureFlagsCompat.doccarchive
# (FeatureFlagsCompat's API: the SDK's NSError and [String: Any] additions, with the FeatureFlags API it re-exports).
# An archive is also a static website: serve its directory (python3 -m http.server --directory ARCHIVE 8000) and
# open http://127.0.0.1:8000/documentation/featureflags/ (or .../featureflagscompat/).
set -euo pipefail
cd "$(dirname "$0")/.."

swift=$(command -v swift)
docc=${DOCC:-$(dirname "$(readlink -f "$swift")")/docc}
[[ -x $docc ]] || { echo "build-docs: no docc beside $swift (set DOCC=PATH)" >&2; exit 1; }
out=${1:-.build/docs}
work=.build/docs
all=$work/symbol-graphs

rm -rf "$all" "$work/FeatureFlags" "$work/FeatureFlagsCompat"
mkdir -p "$all" "$work/FeatureFlags" "$work/FeatureFlagsCompat" "$out"
# FeatureFlagsCompat builds FeatureFlags too; every module compiled writes its symbol graph into $all. Its own
# scratch path keeps the main build's flags as they are.
swift build --scratch-path "$work/build" --target FeatureFlagsCompat -Xswiftc -warnings-as-errors \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$all" >&2
cp "$all/FeatureFlags.symbols.json" "$work/FeatureFlags/"
cp "$all/FeatureFlagsCompat.symbols.json" "$work/FeatureFlagsCompat/"

rm -rf "$out/FeatureFlags.doccarchive" "$out/FeatureFlagsCompat.doccarchive"
"$docc" convert Sources/FeatureFlags/FeatureFlags.docc --additional-symbol-graph-dir "$work/FeatureFlags" \
    --fallback-display-name FeatureFlags --fallback-bundle-identifier pwflagsd.FeatureFlags \
    --warnings-as-errors --output-path "$out/FeatureFlags.doccarchive" >&2
"$docc" convert --additional-symbol-graph-dir "$work/FeatureFlagsCompat" \
    --fallback-display-name FeatureFlagsCompat --fallback-bundle-identifier pwflagsd.FeatureFlagsCompat \
    --warnings-as-errors --output-path "$out/FeatureFlagsCompat.doccarchive" >&2
echo "$out/FeatureFlags.doccarchive"
echo "$out/FeatureFlagsCompat.doccarchive"
