package etcdplay

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
)

func TestParseScript(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		want    []Command
		wantErr string
	}{
		{
			name:   "put get del",
			script: "put k1 \"a b\" --prev-kv\nget k --prefix --rev=3 --limit 2 --keys-only\n# comment\n\ndel a c --prev-kv\n",
			want: []Command{
				{Source: "s:1", Kind: Put, Key: "k1", Value: []byte("a b"), Put: mvcc.PutOptions{PrevKV: true}},
				{Source: "s:2", Kind: Get, Key: "k", Range: mvcc.RangeOptions{End: "l", Rev: 3, Limit: 2, KeysOnly: true}},
				{Source: "s:5", Kind: Del, Key: "a", Delete: mvcc.DeleteOptions{End: "c", PrevKV: true}},
			},
		},
		{
			name:   "from-key and watch",
			script: "get a --from-key\nwatch /r/ --prefix --rev 5 --prev-kv\ncompact 7 --physical\n",
			want: []Command{
				{Source: "s:1", Kind: Get, Key: "a", Range: mvcc.RangeOptions{End: "\x00"}},
				{Source: "s:2", Kind: Watch, Key: "/r/", Watch: mvcc.WatchOptions{End: "/r0", Rev: 5, PrevKV: true}},
				{Source: "s:3", Kind: Compact, Rev: 7},
			},
		},
		{
			name:   "txn",
			script: "txn\nmod(\"k1\") = \"0\"\nvalue(\"k2\") != \"x\"\n\nput k1 v\n\nget k1\n\nput z 1\n",
			want: []Command{
				{Source: "s:1", Kind: Txn, Txn: mvcc.Txn{
					Compare: []mvcc.Compare{mvcc.ModRevision("k1", mvcc.Equal, 0), mvcc.Value("k2", mvcc.NotEqual, []byte("x"))},
					Success: []mvcc.Op{mvcc.OpPutKV("k1", []byte("v"), mvcc.PutOptions{})},
					Failure: []mvcc.Op{mvcc.OpGet("k1", mvcc.RangeOptions{})},
				}},
				{Source: "s:9", Kind: Put, Key: "z", Value: []byte("1")},
			},
		},
		{
			name:   "pasted etcdctl lines",
			script: "etcdctl put k1 v1\netcdctl get k1 -w json\nget k1 --rev=2 --write-out=json\nget k1 -wjson --keys-only\nget k1 --write-out simple -w=json\n",
			want: []Command{
				{Source: "s:1", Kind: Put, Key: "k1", Value: []byte("v1")},
				{Source: "s:2", Kind: Get, Key: "k1", WriteOut: "json"},
				{Source: "s:3", Kind: Get, Key: "k1", Range: mvcc.RangeOptions{Rev: 2}, WriteOut: "json"},
				{Source: "s:4", Kind: Get, Key: "k1", Range: mvcc.RangeOptions{KeysOnly: true}, WriteOut: "json"},
				{Source: "s:5", Kind: Get, Key: "k1", WriteOut: "json"},
			},
		},
		{name: "keys-only with count-only", script: "get a --keys-only --count-only\n", wantErr: "s:1: get: `--keys-only` and `--count-only` cannot be set at the same time, choose one"},
		{name: "prefix with from-key", script: "get a --prefix --from-key\n", wantErr: "s:1: get: `--prefix` and `--from-key` cannot be set at the same time, choose one"},
		{name: "write-out without a value", script: "get a -w\n", wantErr: "s:1: -w needs a value: simple or json"},
		{name: "write-out in a txn request", script: "txn\n\nget a -w json\n", wantErr: "s:3: a txn request takes no -w"},
		{name: "unknown command", script: "put a 1\nfrob x\n", wantErr: `s:2: unknown command "frob"`},
		{name: "unknown flag", script: "get a --revision 3\n", wantErr: "s:1: get: unknown flag --revision"},
		{name: "bad rev", script: "get a --rev x\n", wantErr: `s:1: get: --rev must be an integer, got "x"`},
		{name: "negative limit", script: "get a --limit=-1\n", wantErr: "s:1: get: --limit must not be negative"},
		{name: "put arity", script: "put a\n", wantErr: "s:1: put: want KEY VALUE, got 1 argument(s)"},
		{name: "prefix with end", script: "get a b --prefix\n", wantErr: "s:1: get: too many arguments"},
		{name: "bad quote", script: "put a \"b\n", wantErr: `s:1: bad quoted argument "b`},
		{name: "bad compare target", script: "txn\nfoo(\"k\") = \"1\"\n", wantErr: `s:2: malformed comparison: foo("k") = "1" (unknown target "foo"`},
		{name: "bad compare op", script: "txn\nmod(\"k\") >= \"1\"\n", wantErr: `unknown operator ">="`},
		{name: "txn watch op", script: "txn\n\nwatch k\n", wantErr: `s:3: invalid txn request "watch"`},
		{name: "compact arity", script: "compact\n", wantErr: "s:1: compact: want REVISION"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseScript("s", strings.NewReader(tt.script))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrSyntax) {
					t.Fatalf("error %v, want one containing %q wrapping ErrSyntax", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

// FuzzParseScript checks that any script either parses or fails with a
// sourced ErrSyntax, and that what parses runs on the embedded store
// without panicking.
func FuzzParseScript(f *testing.F) {
	for _, s := range []string{
		"put k1 a\nget k1 --rev=2\n",
		"txn\nmod(\"k1\") = \"0\"\n\nput k1 v\n\nget k1\n\n",
		"watch a --prefix --rev 1 --prev-kv\nput a/b 1\ndel a --from-key\ncompact 2\n",
		"get \"\\x00\" --from-key --keys-only --limit 1\n",
		"txn\nver(\"a\") > \"-1\"\nc(\"b\") < \"9\"\nval(\"c\") != \"\"\n\ndel a z\nput q \"\"\n\n\n",
		"del \"\" --prefix\n",
		"etcdctl put k1 v1\netcdctl get k1 -w json\nget k1 --rev=2 --write-out=json\n",
		"get a --keys-only --count-only\n",
		"get a -w\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		cmds, err := ParseScript("fuzz", strings.NewReader(script))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.HasPrefix(pe.Source, "fuzz:") {
				if !strings.Contains(err.Error(), "token too long") {
					t.Fatalf("error without a source line: %v", err)
				}
			}
			return
		}
		s := mvcc.NewDefault()
		r := &Runner{KV: s, Emit: func(Result) error { return nil }}
		defer r.Close()
		for i := range cmds {
			if k := cmds[i].Kind; cmds[i].Key == "" && k != Txn && k != Compact {
				t.Fatalf("parsed a command with an empty key: %+v", cmds[i])
			}
			if err := r.Run(context.Background(), &cmds[i]); err != nil {
				var ce *CommandError
				if !errors.As(err, &ce) {
					t.Fatalf("run: %v", err)
				}
			}
		}
	})
}
