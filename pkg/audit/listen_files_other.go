//go:build !unix

package audit

import (
	"fmt"
	"os"
)

// openNoFollow: the system has no O_NOFOLLOW; refuseSymlink looks first.
const openNoFollow = 0

// refuseSymlink refuses a symbolic link at path.
func refuseSymlink(path, flag string) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%s %s: a symbolic link: name the file itself", flag, path)
	}
	return nil
}

func symlinkHint(error) string { return "" }
