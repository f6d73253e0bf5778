package audit

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
)

// minSplit is the smallest file Split cuts: below it one goroutine is
// quicker than the bookkeeping. Tests lower it.
var minSplit int64 = 64 << 20

// Split cuts a plain (not gzip) file source into about n sources of whole
// lines, so that several goroutines can decode one large file. Each part's
// errors still name the file and the line in the whole file. Stdin, gzip
// files, small files and n < 2 are returned as they are.
func Split(src Source, n int) ([]Source, error) {
	if src.path == "" || n < 2 {
		return []Source{src}, nil
	}
	f, err := os.Open(src.path)
	if err != nil {
		return nil, fmt.Errorf("--audit-log %s: %w", src.path, err)
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("--audit-log %s: %w", src.path, err)
	}
	magic := make([]byte, 2)
	if _, err := io.ReadFull(f, magic); err != nil || fi.Size() < minSplit || magic[0] == 0x1f && magic[1] == 0x8b {
		return []Source{src}, nil
	}
	cuts := []int64{0}
	for i := 1; i < n; i++ {
		at, err := nextLine(f, fi.Size()*int64(i)/int64(n))
		if err != nil {
			return nil, fmt.Errorf("--audit-log %s: %w", src.path, err)
		}
		if at > cuts[len(cuts)-1] && at < fi.Size() {
			cuts = append(cuts, at)
		}
	}
	cuts = append(cuts, fi.Size())
	var out []Source
	for i := 0; i+1 < len(cuts); i++ {
		out = append(out, rangeSource(src.path, cuts[i], cuts[i+1]))
	}
	return out, nil
}

// nextLine returns the offset just past the first newline at or after off.
func nextLine(f *os.File, off int64) (int64, error) {
	r := bufio.NewReader(io.NewSectionReader(f, off, 1<<62))
	line, err := r.ReadSlice('\n')
	for err == bufio.ErrBufferFull {
		off += int64(len(line))
		line, err = r.ReadSlice('\n')
	}
	if err != nil && err != io.EOF {
		return 0, err
	}
	return off + int64(len(line)), nil
}

func rangeSource(path string, from, to int64) Source {
	return Source{Name: path, path: path, from: from,
		open: func() (io.ReadCloser, error) {
			f, err := os.Open(path)
			if err != nil {
				return nil, fmt.Errorf("--audit-log %s: %w", path, err)
			}
			return struct {
				io.Reader
				io.Closer
			}{io.NewSectionReader(f, from, to-from), f}, nil
		}}
}

// linesBefore counts the lines of path before offset from, for errors.
func linesBefore(path string, from int64) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer func() { _ = f.Close() }()
	n, buf := 0, make([]byte, 1<<20)
	r := io.LimitReader(f, from)
	for {
		k, err := r.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err != nil {
			return n
		}
	}
}
