package cmdutil

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
)

// client-go logs through klog: discovery's "Unhandled Error" lines, each
// retry, each throttled request. kubectl rv reports what went wrong in its
// own one-line error, so klog is silent unless -v asks for it, the way
// kubectl's -v shows client-go's requests (6) and bodies (8).

// klogLevel is the -v flag's value: setting it configures klog at once.
type klogLevel int

var _ pflag.Value = (*klogLevel)(nil)

func (l *klogLevel) String() string { return strconv.Itoa(int(*l)) }

func (l *klogLevel) Type() string { return "Level" }

func (l *klogLevel) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("want a level from 0 (quiet) up, for example 6 (each request) or 8 (bodies)")
	}
	*l = klogLevel(n)
	SetKlogLevel(n)
	return nil
}

// setKlogLevel silences klog at level 0 and otherwise lets it write to
// standard error at that verbosity.
func SetKlogLevel(n int) {
	if n == 0 {
		klog.SetLogger(logr.Discard())
		return
	}
	klog.ClearLogger()
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("v", strconv.Itoa(n))
}

// addKlogFlags silences klog and registers -v to turn it back on.
func AddKlogFlags(fs *pflag.FlagSet) {
	level := klogLevel(0)
	SetKlogLevel(0)
	fs.VarP(&level, "v", "v", "Log level of the Kubernetes client's own logs, as kubectl's -v: 0 shows none, 6 each request, 8 the bodies too.")
}
