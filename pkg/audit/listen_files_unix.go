//go:build unix

package audit

import (
	"errors"
	"syscall"
)

// openNoFollow makes an open fail on a symbolic link, and not wait for a
// reader on a FIFO (which is then refused as not a regular file).
const openNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// refuseSymlink: O_NOFOLLOW does it here.
func refuseSymlink(string, string) error { return nil }

// symlinkHint explains the error of an open that met a symbolic link.
func symlinkHint(err error) string {
	if errors.Is(err, syscall.ELOOP) {
		return " (a symbolic link: name the file itself)"
	}
	return ""
}
