#!/usr/bin/env bash
# hack/release.sh VERSION: build a kubectl-rv release into dist/ (or $DIST).
#
#   - cross-compiles kubectl-rv for linux and darwin amd64/arm64 and windows
#     amd64 (CGO_ENABLED=0, -trimpath, version/commit/date through -ldflags, so
#     `kubectl rv version` names the release),
#   - packs each with LICENSE, README.md and the completion helper
#     kubectl_complete-rv into kubectl-rv_VERSION_OS_ARCH.tar.gz (.zip on
#     windows), reproducibly (the entries carry the commit's time),
#   - writes the sha256 sums to kubectl-rv_VERSION_checksums.txt,
#   - renders the krew manifest krew/rv.yaml into dist/rv.yaml with each
#     archive's URI (under $RELEASE_BASE_URL, default the GitHub release of
#     VERSION) and sha256, and checks it against krew's rules,
#   - checks the release as a whole (hack/pack verify, krew.CheckRelease):
#     each archive's sha256 in the manifest and the checksums, and in each
#     archive the files the manifest installs, the executable carrying
#     VERSION, LICENSE and README.md.
#
# PLATFORMS="linux/amd64 darwin/arm64" builds only those; the manifest then
# lists only those (a release for krew-index needs all five). The release
# e2e test builds two that way; make release-check builds all five.
#
# Usage: hack/release.sh v0.1.0   (or: make release VERSION=v0.1.0)
set -euo pipefail

VERSION=${1:-}
semver='^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$'
if [[ ! $VERSION =~ $semver ]]; then
	echo "release: VERSION ${VERSION:-(empty)} is not a semantic version with a v prefix; run: make release VERSION=v0.1.0" >&2
	exit 2
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
DIST=${DIST:-$ROOT/dist}
BASE_URL=${RELEASE_BASE_URL:-https://github.com/kubectl-rv/kubectl-rv/releases/download/$VERSION}
ALL_PLATFORMS="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64"
PLATFORMS=${PLATFORMS:-$ALL_PLATFORMS}
for platform in $PLATFORMS; do
	case " $ALL_PLATFORMS " in
	*" $platform "*) ;;
	*) echo "release: PLATFORMS: $platform is not one of $ALL_PLATFORMS" >&2; exit 2 ;;
	esac
done
GO=${GO:-go}

COMMIT=$(git rev-parse HEAD 2>/dev/null || true)
# The build date and the archives' timestamps are the commit's time (or
# SOURCE_DATE_EPOCH), so that two builds of one commit give the same bytes.
if [[ -z ${SOURCE_DATE_EPOCH:-} ]]; then
	SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
fi
DATE=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
PKG=github.com/kubectl-rv/kubectl-rv/pkg/version
LDFLAGS="-s -w -X $PKG.gitVersion=$VERSION -X $PKG.gitCommit=$COMMIT -X $PKG.buildDate=$DATE"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
case $DIST in
/ | "$ROOT" | "$HOME") echo "release: refusing to empty DIST=$DIST" >&2; exit 2 ;;
esac
rm -rf "$DIST"
mkdir -p "$DIST"

"$GO" build -o "$WORK/pack" ./hack/pack

README=README.md
if [[ ! -f $README ]]; then
	echo "release: warning: README.md is missing; the archives get a short stand-in" >&2
	README=$WORK/README.md
	printf '# kubectl rv\n\nkubectl rv (rv for resourceVersion) explains why Kubernetes writes collide.\nRun `kubectl rv --help`; documentation: https://github.com/kubectl-rv/kubectl-rv/tree/main/docs\n' >"$README"
fi

archives=()
for platform in $PLATFORMS; do
	os=${platform%/*}
	arch=${platform#*/}
	dir=$WORK/$os-$arch
	mkdir -p "$dir"
	exe=kubectl-rv
	complete=kubectl_complete-rv
	ext=tar.gz
	if [[ $os == windows ]]; then
		exe=kubectl-rv.exe
		complete=kubectl_complete-rv.cmd
		ext=zip
	fi
	echo "release: building $os/$arch" >&2
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch "$GO" build -trimpath -buildvcs=false -ldflags "$LDFLAGS" -o "$dir/$exe" ./cmd/kubectl-rv
	if [[ $os == windows ]]; then
		printf '@echo off\r\nrem Shell completion for kubectl rv: kubectl runs this with the words after "rv".\r\n"%%~dp0kubectl-rv.exe" __complete %%*\r\n' >"$dir/$complete"
	else
		cp hack/kubectl_complete-rv "$dir/$complete"
		chmod 755 "$dir/$complete"
	fi
	archive=$DIST/kubectl-rv_${VERSION}_${os}_${arch}.$ext
	"$WORK/pack" archive -o "$archive" -mtime "$SOURCE_DATE_EPOCH" \
		"$exe=$dir/$exe" "$complete=$dir/$complete" "LICENSE=LICENSE" "README.md=$README"
	archives+=("$archive")
done

(cd "$DIST" && shopt -s nullglob && sha256sum -- *.tar.gz *.zip >"kubectl-rv_${VERSION}_checksums.txt")
(cd "$DIST" && sha256sum -c --quiet "kubectl-rv_${VERSION}_checksums.txt")

"$WORK/pack" manifest -template krew/rv.yaml -version "$VERSION" -base-url "$BASE_URL" -o "$DIST/rv.yaml" "${archives[@]}"
"$WORK/pack" verify -dir "$DIST" -version "$VERSION" -license LICENSE -platforms "$PLATFORMS"

echo "release: $VERSION in $DIST:" >&2
ls -1 "$DIST" >&2
