package framework

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Background is a kubectl rv command running in the background (kubectl rv
// watch), whose output lines can be awaited while the test acts.
type Background struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	done   chan struct{}

	// mu guards lines, stderr, code and waitErr.
	mu      sync.Mutex
	lines   []string
	stderr  bytes.Buffer
	code    int
	waitErr error
	notify  chan struct{}
}

// StartRV starts kubectl rv ARGS in the background. The test's cleanup
// kills it if the test did not stop it.
func (c *Cluster) StartRV(t testing.TB, args ...string) *Background {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	cmd := c.Command(ctx, "kubectl", append([]string{"rv"}, args...)...)
	// kubectl execs the plugin in its own process, so signals reach kubectl-rv.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 20 * time.Second
	b := &Background{cmd: cmd, cancel: cancel, done: make(chan struct{}), notify: make(chan struct{}, 1)}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &lockedWriter{mu: &b.mu, buf: &b.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting kubectl rv %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
		for sc.Scan() {
			b.mu.Lock()
			b.lines = append(b.lines, sc.Text())
			b.mu.Unlock()
			select {
			case b.notify <- struct{}{}:
			default:
			}
		}
		err := cmd.Wait()
		b.mu.Lock()
		var exitErr *exec.ExitError
		switch {
		case errors.As(err, &exitErr):
			b.code = exitErr.ExitCode()
		case err != nil:
			b.waitErr = err
		}
		b.mu.Unlock()
		close(b.done)
	}()
	t.Cleanup(func() { b.cancel(); <-b.done })
	return b
}

type lockedWriter struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// Lines returns the output lines so far.
func (b *Background) Lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.lines...)
}

// WaitFor waits until some output line satisfies match and returns it; it
// fails the test after timeout or when the command ends first.
func (b *Background) WaitFor(t testing.TB, timeout time.Duration, what string, match func(line string) bool) string {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	seen := 0
	for {
		lines := b.Lines()
		for _, l := range lines[seen:] {
			if match(l) {
				return l
			}
		}
		seen = len(lines)
		select {
		case <-b.notify:
		case <-time.After(200 * time.Millisecond):
		case <-b.done:
			for _, l := range b.Lines()[seen:] {
				if match(l) {
					return l
				}
			}
			t.Fatalf("kubectl rv ended before %s: %s", what, b.result())
		case <-deadline.C:
			t.Fatalf("no %s within %s: %s", what, timeout, b.result())
		}
	}
}

// Signal sends sig to the command (SIGSTOP and SIGCONT freeze and thaw it).
func (b *Background) Signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := b.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

// Stop interrupts the command (as Ctrl-C does), waits for it and returns
// what it printed.
func (b *Background) Stop(t testing.TB) Result {
	t.Helper()
	_ = b.cmd.Process.Signal(syscall.SIGCONT)
	_ = b.cmd.Process.Signal(os.Interrupt)
	return b.Wait(t, time.Minute)
}

// Wait waits for the command to end by itself.
func (b *Background) Wait(t testing.TB, timeout time.Duration) Result {
	t.Helper()
	select {
	case <-b.done:
	case <-time.After(timeout):
		b.cancel()
		<-b.done
		t.Fatalf("kubectl rv did not end within %s: %s", timeout, b.result())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.waitErr != nil {
		t.Fatalf("kubectl rv: %v", b.waitErr)
	}
	return Result{Stdout: strings.Join(b.lines, "\n") + "\n", Stderr: b.stderr.String(), Code: b.code}
}

func (b *Background) result() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Result{Stdout: strings.Join(b.lines, "\n"), Stderr: b.stderr.String(), Code: b.code}.String()
}
