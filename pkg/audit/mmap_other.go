//go:build !linux

package audit

import (
	"errors"
	"os"
)

// Other systems read files (readBlocks): mapping is for Linux, where
// MAP_POPULATE fills a map in one call.
func mapRange(*os.File, int64, int) ([]byte, error) {
	return nil, errors.New("audit: files are not mapped on this system")
}

func unmap([]byte) {}

const canMap = false
