package krew

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	testVersion = "v0.1.0"
	testLicense = "Apache License\nVersion 2.0, January 2004\n"
)

// testEntry is one file written into a test archive.
type testEntry struct {
	name string
	mode int64
	data string
}

// goodEntries are the files hack/release.sh packs for platform p.
func goodEntries(p string) []testEntry {
	exe, complete := "kubectl-rv", "kubectl_complete-rv"
	if strings.HasPrefix(p, "windows/") {
		exe, complete = "kubectl-rv.exe", "kubectl_complete-rv.cmd"
	}
	return []testEntry{
		{exe, 0o755, "binary of " + p + " built as " + testVersion},
		{complete, 0o755, "completion helper"},
		{"LICENSE", 0o644, testLicense},
		{"README.md", 0o644, "# kubectl rv\n"},
	}
}

func archiveName(p string) string {
	goos, arch, _ := strings.Cut(p, "/")
	if goos == "windows" {
		return "kubectl-rv_" + testVersion + "_" + goos + "_" + arch + ".zip"
	}
	return "kubectl-rv_" + testVersion + "_" + goos + "_" + arch + ".tar.gz"
}

func writeTestArchive(t *testing.T, name string, entries []testEntry) {
	t.Helper()
	var buf bytes.Buffer
	if strings.HasSuffix(name, ".zip") {
		zw := zip.NewWriter(&buf)
		for _, e := range entries {
			h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
			h.SetMode(os.FileMode(e.mode))
			w, err := zw.CreateHeader(h)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write([]byte(e.data)); err != nil {
				t.Fatal(err)
			}
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		for _, e := range entries {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: e.mode, Size: int64(len(e.data))}); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.Write([]byte(e.data)); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := gz.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fileSHA256(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// writeTestRelease writes what hack/release.sh writes for platforms into a
// new directory: an archive each (edit may change an archive's entries),
// the checksums and the manifest rendered from rv.yaml.
func writeTestRelease(t *testing.T, platforms []string, edit func(p string, e []testEntry) []testEntry) string {
	t.Helper()
	dir := t.TempDir()
	v := Values{Version: testVersion, Artifacts: map[string]Artifact{}}
	var sums strings.Builder
	for _, p := range platforms {
		name := archiveName(p)
		writeTestArchive(t, filepath.Join(dir, name), edit(p, goodEntries(p)))
		sum := fileSHA256(t, filepath.Join(dir, name))
		v.Artifacts[p] = Artifact{URI: "https://example.com/dl/" + name, SHA256: sum}
		fmt.Fprintf(&sums, "%s  %s\n", sum, name)
	}
	if err := os.WriteFile(filepath.Join(dir, "kubectl-rv_"+testVersion+"_checksums.txt"), []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tmpl, err := os.ReadFile("rv.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := Render(tmpl, v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rv.yaml"), rendered, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func unchanged(_ string, e []testEntry) []testEntry { return e }

func TestCheckReleaseAcceptsWhatReleaseWrites(t *testing.T) {
	for _, platforms := range [][]string{Platforms, {"linux/amd64", "windows/amd64"}} {
		dir := writeTestRelease(t, platforms, unchanged)
		m, err := CheckRelease(Release{Dir: dir, Version: testVersion, Platforms: platforms, License: []byte(testLicense)})
		if err != nil {
			t.Fatalf("%v: %v", platforms, err)
		}
		var got []string
		for _, p := range m.Spec.Platforms {
			got = append(got, p.Selector.MatchLabels["os"]+"/"+p.Selector.MatchLabels["arch"])
		}
		if diff := cmp.Diff(platforms, got); diff != "" {
			t.Errorf("manifest platforms (-want +got):\n%s", diff)
		}
	}
}

// without drops the entry named name.
func without(name string) func(string, []testEntry) []testEntry {
	return func(_ string, e []testEntry) []testEntry {
		return slices.DeleteFunc(e, func(x testEntry) bool { return x.name == name })
	}
}

// changed rewrites the entry named name of the linux/amd64 archive.
func changed(name string, mode int64, data string) func(string, []testEntry) []testEntry {
	return func(p string, e []testEntry) []testEntry {
		for i := range e {
			if p == "linux/amd64" && e[i].name == name {
				e[i] = testEntry{name, mode, data}
			}
		}
		return e
	}
}

func TestCheckReleaseNamesEveryBreakage(t *testing.T) {
	two := []string{"linux/amd64", "windows/amd64"}
	for _, tc := range []struct {
		name string
		edit func(string, []testEntry) []testEntry
		// after changes the release once written.
		after func(t *testing.T, dir string)
		want  string
		// platforms the check expects; two when nil.
		platforms []string
	}{
		{name: "archive lacks a file the manifest installs", edit: without("kubectl_complete-rv"), want: "kubectl-rv_v0.1.0_linux_amd64.tar.gz: the manifest installs kubectl_complete-rv, which the archive lacks"},
		{name: "windows archive lacks its bin", edit: without("kubectl-rv.exe"), want: "kubectl-rv_v0.1.0_windows_amd64.zip: no kubectl-rv.exe"},
		{name: "bin not executable", edit: changed("kubectl-rv", 0o644, testVersion), want: "kubectl-rv is not executable"},
		{name: "bin without its version", edit: changed("kubectl-rv", 0o755, "v0.0.9"), want: "kubectl-rv does not carry its version v0.1.0"},
		{name: "another LICENSE", edit: changed("LICENSE", 0o644, "MIT"), want: "linux_amd64.tar.gz: LICENSE missing or different"},
		{name: "no README.md", edit: without("README.md"), want: "windows_amd64.zip: no README.md"},
		{name: "archive replaced after the manifest", edit: unchanged, after: func(t *testing.T, dir string) {
			writeTestArchive(t, filepath.Join(dir, archiveName("linux/amd64")), goodEntries("linux/arm64"))
		}, want: "linux_amd64.tar.gz: sha256 of the file"},
		{name: "checksums file disagrees", edit: unchanged, after: func(t *testing.T, dir string) {
			sums := filepath.Join(dir, "kubectl-rv_"+testVersion+"_checksums.txt")
			if err := os.WriteFile(sums, []byte(strings.Repeat("0", 64)+"  "+archiveName("windows/amd64")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, want: `in the checksums ""`},
		{name: "a platform not built", edit: unchanged, platforms: Platforms, want: "spec.platforms: no archive for darwin/arm64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTestRelease(t, two, tc.edit)
			if tc.after != nil {
				tc.after(t, dir)
			}
			platforms := tc.platforms
			if platforms == nil {
				platforms = two
			}
			_, err := CheckRelease(Release{Dir: dir, Version: testVersion, Platforms: platforms, License: []byte(testLicense)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckRelease: want an error with %q, got %v", tc.want, err)
			}
		})
	}
}

func TestCheckReleaseNamesAnotherVersion(t *testing.T) {
	dir := writeTestRelease(t, Platforms, unchanged)
	_, err := CheckRelease(Release{Dir: dir, Version: "v0.2.0", Platforms: Platforms, License: []byte(testLicense)})
	if err == nil || !strings.Contains(err.Error(), `spec.version is "v0.1.0", want "v0.2.0"`) {
		t.Errorf("CheckRelease of v0.1.0 as v0.2.0: want the version named, got %v", err)
	}
}
