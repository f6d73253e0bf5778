// Command pack is hack/release.sh's helper: it writes release archives
// (.tar.gz and .zip, byte-for-byte reproducible for a given input and
// timestamp) and renders the krew manifest from krew/rv.yaml with the
// archives' URIs and sha256 sums, checking the result against krew's rules,
// and checks a built release (verify: krew.CheckRelease).
// It needs no tar, gzip or zip on the machine.
//
//	pack archive -o OUT.tar.gz|OUT.zip -mtime UNIX NAME=PATH...
//	pack manifest -template krew/rv.yaml -version v0.1.0 -base-url URL -o dist/rv.yaml ARCHIVE...
//	pack verify -dir dist -version v0.1.0 -license LICENSE -platforms "linux/amd64 ..."
package main
