#!/usr/bin/env bash
# hack/render-reports.sh [OUTDIR]: render every report picture kubectl rv
# writes (simulate, conflicts and leases --report, SVG and HTML) and take a
# screenshot of each in headless Chromium, so that a change to the pictures
# is looked at the way a user sees it, not only diffed as text.
#
# Needs chromium (Debian: apt-get install chromium). Writes OUTDIR (default
# _output/reports): NAME.svg / NAME.html and NAME.svg.png / NAME.html.png.
# The conflicts pictures are of a small synthetic audit log (hack/genaudit),
# the leases pictures of examples/leases-audit.log.gz (the e2e scene).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-_output/reports}
mkdir -p "$out"
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [[ -z $chrome ]]; then
	echo "render-reports: no chromium: apt-get install chromium" >&2
	exit 2
fi
bin=$(mktemp -d)
profile=$(mktemp -d)
trap 'rm -rf "$bin" "$profile"' EXIT
go build -o "$bin/" ./cmd/kubectl-rv
go run ./hack/genaudit -size 400KiB -objects 3 -writers 5 -conflict-percent 30 -out "$bin/audit.log"

for s in two-clients retry-storm leader-election ssa-fight lost-update; do
	for ext in svg html; do
		"$bin/kubectl-rv" simulate run --builtin "$s" --report "$out/simulate-$s.$ext" >/dev/null 2>&1
	done
done
for ext in svg html; do
	"$bin/kubectl-rv" conflicts --audit-log "$bin/audit.log" --report "$out/conflicts.$ext" >/dev/null 2>&1 || true
	"$bin/kubectl-rv" leases --audit-log examples/leases-audit.log.gz --lease-duration 6s --report "$out/leases.$ext" >/dev/null 2>&1 || true
done

# The flags keep Chromium off the network and out of the user's profile.
shot() { # file width height
	"$chrome" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$profile" --hide-scrollbars \
		--screenshot="$1.png" --window-size="$2,$3" "file://$(realpath "$1")" >/dev/null 2>&1
}
for f in "$out"/*.svg "$out"/*.html; do
	shot "$f" 1400 1600
	echo "$f.png"
done
