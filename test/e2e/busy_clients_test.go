//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The busy scene's load clients: each a service account's pod of its
// own (impersonated), each logging what it sent and what it got. They
// play, in seconds, three real cases of who loads the API server: an
// operator that GETs one object over and over (console-operator), a
// policy server whose creates always meet 409 AlreadyExists, between
// gets and patches (Kubewarden), and an operator that GETs and PUTs
// unchanged objects on every pass (ROKS). Their objects are outside the
// scene's namespace, so the conflicts tests scoped to it see none of
// them.
const (
	clientGetLoop  = "top-get-loop"
	clientCreates  = "top-create-existing"
	clientNoOps    = "top-noop-update"
	clientsRRNS    = "rv-audit-rr"
	clientsFor     = 12 * time.Second
	getLoopPace    = 25 * time.Millisecond
	createsPace    = time.Second
	noOpsPace      = 250 * time.Millisecond
	clientsMaxReqs = 1000
)

// sceneClient is what one load client counted of its own requests: the
// truth the top and wasted views must match.
type sceneClient struct {
	// user and pod are the service account and pod it acts as; userAgent
	// the user agent it sends.
	user, pod, userAgent string
	// objects are the objects it loads, as the top view names them
	// (configmaps/NS/NAME).
	objects []string

	// mu guards the counts below.
	mu sync.Mutex
	// codes counts its requests by verb and the status code answered.
	codes map[string]map[int]int
	// alreadyExists counts its creates answered 409 AlreadyExists; noOps
	// its updates answered with the resourceVersion they sent.
	alreadyExists, noOps int
}

// roundTrip sends req through rt and counts it by verb and status code:
// the audit log holds one event for each request the API server answered.
func (c *sceneClient) roundTrip(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	verb := map[string]string{http.MethodGet: "get", http.MethodPost: "create", http.MethodPut: "update", http.MethodPatch: "patch", http.MethodDelete: "delete"}[req.Method]
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.codes[verb] == nil {
		c.codes[verb] = map[int]int{}
	}
	c.codes[verb][resp.StatusCode]++
	return resp, nil
}

func (c *sceneClient) count(alreadyExists, noOps int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.alreadyExists += alreadyExists
	c.noOps += noOps
}

// requests is how many requests of verb it sent that were answered code.
func (c *sceneClient) requests(verb string, code int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.codes[verb][code]
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// client registers a load client and returns its clientset: an admin
// acting as service account rv-top:name in pod pod, sending user agent
// sceneUA(name).
func (s *busyScene) client(name, pod string) (*sceneClient, kubernetes.Interface) {
	c := &sceneClient{user: "system:serviceaccount:rv-top:" + name, pod: pod, userAgent: sceneUA(name), codes: map[string]map[int]int{}}
	cfg := cluster.RESTConfig(s.tb, "rv-admin", c.userAgent)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: c.user, Groups: []string{"system:masters"},
		Extra: map[string][]string{"authentication.kubernetes.io/pod-name": {pod}}}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) { return c.roundTrip(rt, r) })
	}
	sceneMu.Lock()
	defer sceneMu.Unlock()
	s.clients[name] = c
	return c, kubernetes.NewForConfigOrDie(cfg)
}

// loadObjects creates the load clients' namespace and objects: ConfigMaps
// hot and exists in s.topNS, two per scene in rv-audit-rr (audited at
// RequestResponse level, so that no-op updates can be told).
func (s *busyScene) loadObjects(ctx context.Context, cs kubernetes.Interface) error {
	for _, ns := range []string{s.topNS, clientsRRNS} {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	for _, o := range [][2]string{{s.topNS, "hot"}, {s.topNS, "exists"}, {clientsRRNS, s.ns + "-a"}, {clientsRRNS, s.ns + "-b"}} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: o[1], Namespace: o[0]}, Data: map[string]string{"k": "v"}}
		if _, err := cs.CoreV1().ConfigMaps(o[0]).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// paced calls f every pace (after the last call returns, so never
// faster) for clientsFor, at most clientsMaxReqs times.
func paced(pace time.Duration, f func(i int) error) error {
	end := time.Now().Add(clientsFor)
	for i := 0; i < clientsMaxReqs && time.Now().Before(end); i++ {
		if err := f(i); err != nil {
			return err
		}
		time.Sleep(pace)
	}
	return nil
}

// getLoop GETs ConfigMap hot every getLoopPace, as console-operator read
// one object over and over.
func (s *busyScene) getLoop(ctx context.Context) error {
	c, cs := s.client(clientGetLoop, "console-operator-7d9f")
	c.objects = []string{"configmaps/" + s.topNS + "/hot"}
	return paced(getLoopPace, func(int) error {
		_, err := cs.CoreV1().ConfigMaps(s.topNS).Get(ctx, "hot", metav1.GetOptions{})
		return wrapClient(clientGetLoop, err)
	})
}

// createExisting creates ConfigMap exists every createsPace, which always
// meets 409 AlreadyExists, then GETs it and patches it, as Kubewarden's
// policy server did with its reports.
func (s *busyScene) createExisting(ctx context.Context) error {
	c, cs := s.client(clientCreates, "policy-server-5c8b")
	c.objects = []string{"configmaps/" + s.topNS + "/exists"}
	cms := cs.CoreV1().ConfigMaps(s.topNS)
	return paced(createsPace, func(i int) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "exists"}, Data: map[string]string{"k": "v"}}
		_, err := cms.Create(ctx, cm, metav1.CreateOptions{FieldManager: clientCreates})
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: the create of an existing ConfigMap: got %v, want 409 AlreadyExists", clientCreates, err)
		}
		c.count(1, 0)
		if _, err := cms.Get(ctx, "exists", metav1.GetOptions{}); err != nil {
			return wrapClient(clientCreates, err)
		}
		patch := fmt.Sprintf(`{"data":{"pass":"%d"}}`, i)
		_, err = cms.Patch(ctx, "exists", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: clientCreates})
		return wrapClient(clientCreates, err)
	})
}

// noOpUpdates GETs and PUTs unchanged each of its two ConfigMaps in
// rv-audit-rr every noOpsPace, as the ROKS operator did on every pass;
// an update answered with the resourceVersion it sent is a no-op.
func (s *busyScene) noOpUpdates(ctx context.Context) error {
	c, cs := s.client(clientNoOps, "roks-operator-6f4d")
	names := []string{s.ns + "-a", s.ns + "-b"}
	for _, n := range names {
		c.objects = append(c.objects, "configmaps/"+clientsRRNS+"/"+n)
	}
	cms := cs.CoreV1().ConfigMaps(clientsRRNS)
	err := paced(noOpsPace, func(int) error {
		for _, n := range names {
			cur, err := cms.Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return wrapClient(clientNoOps, err)
			}
			got, err := cms.Update(ctx, cur, metav1.UpdateOptions{FieldManager: clientNoOps})
			if err != nil {
				return wrapClient(clientNoOps, err)
			}
			if got.ResourceVersion == cur.ResourceVersion {
				c.count(0, 1)
			}
		}
		return nil
	})
	if err == nil && c.noOps == 0 {
		return errors.New(clientNoOps + ": no update was a no-op: the API server wrote every one")
	}
	return err
}

func wrapClient(name string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
