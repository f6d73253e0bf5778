package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/krew"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: pack archive|manifest|verify [flags] ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "archive":
		err = archiveCmd(os.Args[2:])
	case "manifest":
		err = manifestCmd(os.Args[2:])
	case "verify":
		err = verifyCmd(os.Args[2:])
	default:
		err = fmt.Errorf("unknown verb %q: want archive, manifest or verify", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pack: %v\n", err)
		os.Exit(1)
	}
}

// entry is one file of an archive: its name inside and its source.
type entry struct{ name, path string }

func archiveCmd(args []string) error {
	fs := flag.NewFlagSet("archive", flag.ContinueOnError)
	out := fs.String("o", "", "archive to write (.tar.gz or .zip)")
	mtime := fs.Int64("mtime", 0, "modification time of every entry, in Unix seconds")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var entries []entry
	for _, a := range fs.Args() {
		name, path, ok := strings.Cut(a, "=")
		if !ok || name == "" || path == "" {
			return fmt.Errorf("archive entry %q: want NAME=PATH", a)
		}
		entries = append(entries, entry{name, path})
	}
	if len(entries) == 0 {
		return errors.New("archive: no entries")
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	t := time.Unix(*mtime, 0).UTC()
	switch {
	case strings.HasSuffix(*out, ".tar.gz"):
		err = writeTarGz(f, entries, t)
	case strings.HasSuffix(*out, ".zip"):
		err = writeZip(f, entries, t)
	default:
		err = fmt.Errorf("-o %q: want a .tar.gz or .zip name", *out)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func mode(path string) (int64, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0, nil, err
	}
	if st.Mode()&0o111 != 0 {
		return 0o755, data, nil
	}
	return 0o644, data, nil
}

func writeTarGz(w io.Writer, entries []entry, t time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		m, data, err := mode(e.path)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: m, Size: int64(len(data)), ModTime: t, Format: tar.FormatPAX, Uname: "root", Gname: "root"}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, entries []entry, t time.Time) error {
	zw := zip.NewWriter(w)
	for _, e := range entries {
		m, data, err := mode(e.path)
		if err != nil {
			return err
		}
		hdr := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: t}
		hdr.SetMode(os.FileMode(m))
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := fw.Write(data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// archiveRE names a release archive: kubectl-rv_VERSION_OS_ARCH.tar.gz|zip.
var archiveRE = regexp.MustCompile(`^kubectl-rv_(.+)_([a-z0-9]+)_([a-z0-9]+)\.(tar\.gz|zip)$`)

func manifestCmd(args []string) error {
	fs := flag.NewFlagSet("manifest", flag.ContinueOnError)
	tmplPath := fs.String("template", "krew/rv.yaml", "manifest template")
	version := fs.String("version", "", "release version (v0.1.0)")
	baseURL := fs.String("base-url", "", "URL the archives are downloaded from")
	out := fs.String("o", "", "manifest to write; its file name must be the plugin name")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !krew.ValidVersion(*version) {
		return fmt.Errorf("-version %q: want a semantic version with a v prefix, such as v0.1.0", *version)
	}
	v := krew.Values{Version: *version, Artifacts: map[string]krew.Artifact{}}
	for _, a := range fs.Args() {
		m := archiveRE.FindStringSubmatch(filepath.Base(a))
		if m == nil || m[1] != *version {
			return fmt.Errorf("archive %q: want kubectl-rv_%s_OS_ARCH.tar.gz or .zip", a, *version)
		}
		data, err := os.ReadFile(a)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		v.Artifacts[m[2]+"/"+m[3]] = krew.Artifact{
			URI:    strings.TrimSuffix(*baseURL, "/") + "/" + filepath.Base(a),
			SHA256: hex.EncodeToString(sum[:]),
		}
	}
	tmpl, err := os.ReadFile(*tmplPath)
	if err != nil {
		return err
	}
	rendered, err := krew.Render(tmpl, v)
	if err != nil {
		return err
	}
	m, err := krew.Parse(rendered)
	if err != nil {
		return err
	}
	built := slices.Sorted(maps.Keys(v.Artifacts))
	if err := krew.ValidateFor(m, *out, built); err != nil {
		return fmt.Errorf("the rendered manifest breaks krew's rules:\n%w", err)
	}
	if len(built) < len(krew.Platforms) {
		fmt.Fprintf(os.Stderr, "pack: warning: the manifest lists only the platforms built (%s); a release for krew-index ships all of %s\n",
			strings.Join(built, ", "), strings.Join(krew.Platforms, ", "))
	}
	return os.WriteFile(*out, rendered, 0o644)
}

// verifyCmd checks a release directory with krew.CheckRelease: the
// manifest, the checksums and every archive, for the platforms built.
func verifyCmd(args []string) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	dir := fs.String("dir", "dist", "release directory (hack/release.sh's DIST)")
	version := fs.String("version", "", "release version (v0.1.0)")
	license := fs.String("license", "LICENSE", "the repository's LICENSE, which every archive must ship")
	platforms := fs.String("platforms", strings.Join(krew.Platforms, " "), "os/arch pairs built, space-separated: the manifest must list exactly these")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("verify: unexpected arguments %q: the release is -dir", fs.Args())
	}
	lic, err := os.ReadFile(*license)
	if err != nil {
		return fmt.Errorf("-license: %w", err)
	}
	r := krew.Release{Dir: *dir, Version: *version, Platforms: strings.Fields(*platforms), License: lic}
	if _, err := krew.CheckRelease(r); err != nil {
		return fmt.Errorf("the release in %s fails its check:\n%w", *dir, err)
	}
	return nil
}
