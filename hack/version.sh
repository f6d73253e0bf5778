#!/usr/bin/env bash
# hack/version.sh: print the version `make build` stamps into kubectl-rv, in
# a form that orders, as Go's pseudo-versions do:
#   - at a tag vX.Y.Z:                      vX.Y.Z
#   - N commits after the tag vX.Y.Z:       vX.Y.(Z+1)-0.<commit time>-<commit>
#   - after a pre-release tag vX.Y.Z-rc.1:  vX.Y.Z-rc.1.0.<commit time>-<commit>
#   - with no tag at all:                   v0.0.0-<commit time>-<commit>
#   - with uncommitted changes:             the above, then +dirty
# <commit time> is the commit's UTC time as yyyymmddhhmmss and <commit> its
# first 12 hex digits, so a bug report's version says which build is newer.
# Outside a git checkout it prints v0.0.0-dev.
set -euo pipefail
cd "${1:-.}"

if ! commit=$(git rev-parse --short=12 HEAD 2>/dev/null); then
	echo v0.0.0-dev
	exit 0
fi
dirty=
if [[ -n $(git status --porcelain --untracked-files=no 2>/dev/null) ]]; then
	dirty=+dirty
fi
if tag=$(git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null); then
	echo "$tag$dirty"
	exit 0
fi
when=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S HEAD)
if tag=$(git describe --tags --abbrev=0 --match 'v[0-9]*' HEAD 2>/dev/null) &&
	[[ $tag =~ ^v([0-9]+)\.([0-9]+)\.([0-9]+)$ ]]; then
	echo "v${BASH_REMATCH[1]}.${BASH_REMATCH[2]}.$((BASH_REMATCH[3] + 1))-0.$when-$commit$dirty"
	exit 0
fi
if [[ ${tag:-} =~ ^v[0-9]+\.[0-9]+\.[0-9]+-[0-9A-Za-z.-]+$ ]]; then
	# After a pre-release tag: still before the release it names.
	echo "$tag.0.$when-$commit$dirty"
	exit 0
fi
echo "v0.0.0-$when-$commit$dirty"
