package audit

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapRange maps n bytes of f from off (a multiple of the page size) for
// reading, its pages populated at once: one system call puts the page
// cache's pages in the map, where reading copies every byte.
func mapRange(f *os.File, off int64, n int) ([]byte, error) {
	return unix.Mmap(int(f.Fd()), off, n, unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
}

func unmap(b []byte) {
	_ = unix.Munmap(b)
}

// canMap says whether files are mapped on this system.
const canMap = true
