package doctor

import (
	"net/http"

	"k8s.io/client-go/rest"
)

// FirstAnswers makes cfg's clients report the server's first answer to a
// request that times out. client-go retries a 429 or 5xx that carries
// Retry-After up to ten times; a list at a future version answers 504 with
// Retry-After: 1 after the watch cache's 3 s wait, so a retrying client
// reports it only after about 40 s, and a check of what the server answers
// would be checking client-go's retries instead. A 429 (throttled, or a
// watch cache still initializing after a restart) is still retried as
// client-go does: it says "not yet", not how the endpoint behaves.
func FirstAnswers(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return noRetryAfter{rt} })
	return c
}

type noRetryAfter struct{ next http.RoundTripper }

func (n noRetryAfter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := n.next.RoundTrip(r)
	if resp != nil && resp.StatusCode == http.StatusGatewayTimeout {
		resp.Header.Del("Retry-After")
	}
	return resp, err
}
