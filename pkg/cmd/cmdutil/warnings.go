package cmdutil

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// warningFilter keeps the API server's warnings about types the user did
// not name out of the way. A command that covers every type the cluster
// serves (churn and doctor without TYPE) lists Endpoints and other
// deprecated types on every run, and the server answers each with a
// deprecation warning the user did nothing to cause. Those are held and
// summarised once, after the command (flush), with the advice to name a
// type. A command that takes no types (leases, which lists Endpoints for
// their annotation locks) cannot follow that advice: its held warnings
// are dropped. Warnings about named types, and every warning of commands
// that do not ask for this, pass as the server sent them.
//
// It sits in the transport, below client-go's warning handler, because
// only there a warning is seen with the request that caused it.
type warningFilter struct {
	// mu guards the fields below: the requests of a scan run in parallel.
	mu sync.Mutex
	// named are the types whose warnings pass; nil lets every warning pass.
	named map[schema.GroupResource]bool
	// held are the distinct warnings held back, by text, with their type.
	held map[string]schema.GroupResource
	// drop forgets the held warnings instead of summarising them.
	drop bool
	// summarised are the texts flush has counted: each once per run.
	summarised map[string]bool
}

// onlyFor makes the warnings about types outside named be held (an empty
// named holds every type's) and summarised after the command, or dropped
// with drop, for a command that takes no types.
func (w *warningFilter) onlyFor(named []schema.GroupResource, drop bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drop = drop
	w.named = map[schema.GroupResource]bool{}
	for _, gr := range named {
		w.named[gr] = true
	}
}

// wrap is a transport.WrapperFunc for rest.Config.Wrap.
func (w *warningFilter) wrap(next http.RoundTripper) http.RoundTripper {
	return warningTransport{filter: w, next: next}
}

type warningTransport struct {
	filter *warningFilter
	next   http.RoundTripper
}

func (t warningTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if resp == nil || len(resp.Header.Values("Warning")) == 0 {
		return resp, err
	}
	if gr, ok := groupResourceOf(req.URL.Path); ok && t.filter.hold(gr, resp.Header.Values("Warning")) {
		resp.Header.Del("Warning")
	}
	return resp, err
}

// hold keeps the warnings of a request about gr and reports whether it did.
func (w *warningFilter) hold(gr schema.GroupResource, headers []string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.named == nil || w.named[gr] {
		return false
	}
	if w.drop {
		return true
	}
	warnings, _ := utilnet.ParseWarningHeaders(headers)
	if w.held == nil {
		w.held = map[string]schema.GroupResource{}
	}
	for _, h := range warnings {
		if _, seen := w.held[h.Text]; !seen && !w.summarised[h.Text] {
			w.held[h.Text] = gr
		}
	}
	return true
}

// flush writes one line for the warnings held back, if any, and forgets
// them: "Warning: 2 deprecation warnings for types you did not name
// (componentstatuses, endpoints): name a type to see its warnings". A
// warning it has counted is not counted again.
func (w *warningFilter) flush(out io.Writer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.held) == 0 {
		return
	}
	if w.summarised == nil {
		w.summarised = map[string]bool{}
	}
	var types []string
	deprecations := true
	for txt, gr := range w.held {
		w.summarised[txt] = true
		if !slices.Contains(types, gr.String()) {
			types = append(types, gr.String())
		}
		deprecations = deprecations && strings.Contains(txt, "deprecated")
	}
	slices.Sort(types)
	if len(types) > 3 {
		types = append(types[:3], fmt.Sprintf("%d more", len(types)-3))
	}
	kind := "server warning"
	if deprecations {
		kind = "deprecation warning"
	}
	fmt.Fprintf(out, "Warning: %s for types you did not name (%s): name a type to see its warnings\n",
		text.Plural(len(w.held), kind), text.Escape(strings.Join(types, ", ")))
	w.held = nil
}

// groupResourceOf reads the type of a resource request's path, as the API
// server's request info does: /api/v1/[namespaces/NS/]RESOURCE/... and
// /apis/GROUP/VERSION/[namespaces/NS/]RESOURCE/...; a namespace's own
// status and finalize are the namespaces type. ok is false for other
// paths (discovery, /version).
func groupResourceOf(path string) (gr schema.GroupResource, ok bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		gr.Group, parts = parts[1], parts[3:]
	default:
		return gr, false
	}
	if len(parts) > 2 && parts[0] == "namespaces" && parts[2] != "status" && parts[2] != "finalize" {
		parts = parts[2:]
	}
	gr.Resource = parts[0]
	return gr, gr.Resource != ""
}

// syncWarnf returns a warnf that writes warnings to w one at a time: the
// watch driver warns from one goroutine per target.
func SyncWarnf(w io.Writer) func(format string, args ...any) {
	var mu sync.Mutex
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		output.Warnf(w, format, args...)
	}
}

// newWarningHandler prints the API server's warnings as kubectl does
// ("Warning: ...", each once), escaped for the terminal: the text is the
// server's, and an admission webhook's at that.
func NewWarningHandler(w io.Writer) rest.WarningHandler {
	return escapingWarnings{rest.NewWarningWriter(w, rest.WarningWriterOptions{Deduplicate: true})}
}

type escapingWarnings struct{ next rest.WarningHandler }

func (e escapingWarnings) HandleWarningHeader(code int, agent, message string) {
	e.next.HandleWarningHeader(code, agent, text.Escape(message))
}
