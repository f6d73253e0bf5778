package krew

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ArchiveFile is one entry of a release archive.
type ArchiveFile struct {
	Mode os.FileMode
	Data []byte
}

// ReadArchive reads a release archive (.tar.gz, or .zip for windows) into
// memory, by entry name.
func ReadArchive(name string) (map[string]ArchiveFile, error) {
	if strings.HasSuffix(name, ".zip") {
		return readZip(name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", name, err)
	}
	files := map[string]ArchiveFile{}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("archive %s: %w", name, err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("archive %s: %s: %w", name, hdr.Name, err)
		}
		files[hdr.Name] = ArchiveFile{hdr.FileInfo().Mode(), data}
	}
}

func readZip(name string) (map[string]ArchiveFile, error) {
	zr, err := zip.OpenReader(name)
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", name, err)
	}
	defer zr.Close()
	files := map[string]ArchiveFile{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("archive %s: %s: %w", name, f.Name, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("archive %s: %s: %w", name, f.Name, err)
		}
		files[f.Name] = ArchiveFile{f.Mode(), data}
	}
	return files, nil
}

// Release is what CheckRelease expects of a directory hack/release.sh wrote.
type Release struct {
	// Dir holds rv.yaml, kubectl-rv_VERSION_checksums.txt and the archives.
	Dir     string
	Version string
	// Platforms are the os/arch pairs built: the manifest lists exactly these.
	Platforms []string
	// License is the repository's LICENSE, which every archive ships unchanged.
	License []byte
}

// CheckRelease checks a release directory: rv.yaml keeps krew's rules for
// r.Platforms and names r.Version; the checksums file gives each archive
// the manifest's sha256, which is the file's; each archive holds every file
// the manifest installs, a bin (executable outside windows) that carries
// the version, the LICENSE and README.md. It returns the parsed manifest and
// every violation, joined.
func CheckRelease(r Release) (*Manifest, error) {
	manifest := filepath.Join(r.Dir, "rv.yaml")
	data, err := os.ReadFile(manifest)
	if err != nil {
		return nil, err
	}
	m, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", manifest, err)
	}
	var errs []error
	if err := ValidateFor(m, manifest, r.Platforms); err != nil {
		errs = append(errs, fmt.Errorf("%s breaks krew's rules:\n%w", manifest, err))
	}
	if m.Spec.Version != r.Version {
		errs = append(errs, fmt.Errorf("%s: spec.version is %q, want %q", manifest, m.Spec.Version, r.Version))
	}
	sums, err := readChecksums(filepath.Join(r.Dir, "kubectl-rv_"+r.Version+"_checksums.txt"))
	if err != nil {
		return m, errors.Join(append(errs, err)...)
	}
	for _, p := range m.Spec.Platforms {
		errs = append(errs, checkArchive(r, p, sums)...)
	}
	return m, errors.Join(errs...)
}

// readChecksums reads sha256sum's output: the sum by file name.
func readChecksums(name string) (map[string]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sum, file, ok := strings.Cut(sc.Text(), "  "); ok {
			sums[file] = sum
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return sums, nil
}

// checkArchive checks the archive of one platform entry of the manifest.
func checkArchive(r Release, p Platform, sums map[string]string) []error {
	name := path.Base(p.URI)
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{name}, args...)...))
	}
	data, err := os.ReadFile(filepath.Join(r.Dir, name))
	if err != nil {
		return []error{err}
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != p.SHA256 || sums[name] != p.SHA256 {
		bad("sha256 of the file %s, in the manifest %s, in the checksums %q", got, p.SHA256, sums[name])
	}
	files, err := ReadArchive(filepath.Join(r.Dir, name))
	if err != nil {
		return append(errs, err)
	}
	for _, f := range p.Files {
		if _, ok := files[f.From]; !ok {
			bad("the manifest installs %s, which the archive lacks", f.From)
		}
	}
	bin, ok := files[p.Bin]
	switch {
	case !ok:
		bad("no %s", p.Bin)
	case p.Selector.MatchLabels["os"] != "windows" && bin.Mode&0o111 == 0:
		bad("%s is not executable (%v)", p.Bin, bin.Mode)
	case !bytes.Contains(bin.Data, []byte(r.Version)):
		bad("%s does not carry its version %s", p.Bin, r.Version)
	}
	if lic, ok := files["LICENSE"]; !ok || !bytes.Equal(lic.Data, r.License) {
		bad("LICENSE missing or different from the repository's")
	}
	if _, ok := files["README.md"]; !ok {
		bad("no README.md")
	}
	return errs
}
