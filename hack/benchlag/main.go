// Command benchlag supports hack/bench-lag.sh: it fills a cluster with
// custom resources and Deployments, prints the types kubectl rv lag -A
// scans, and lists those types the bare way (the floor no client can beat).
//
//	benchlag populate -crs 50000 -deployments 2000 -namespaces 20
//	benchlag types
//	benchlag floor -types deployments.apps,... [-decode]
//
// It reads KUBECONFIG. It is a benchmark fixture, not part of kubectl-rv.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-rv/kubectl-rv/pkg/lag"
)

// Group is the benchmark CRD's group.
const Group = "bench.kubectl-rv.dev"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchlag populate|types|floor [flags]")
		os.Exit(2)
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
	if err != nil {
		fail(err)
	}
	// The same client rate limit as kubectl rv lag.
	cfg.QPS, cfg.Burst = 50, 100
	ctx := context.Background()
	switch os.Args[1] {
	case "populate":
		fs := flag.NewFlagSet("populate", flag.ExitOnError)
		crs := fs.Int("crs", 50000, "custom resources to create")
		deps := fs.Int("deployments", 2000, "Deployments to create")
		nss := fs.Int("namespaces", 20, "namespaces to spread them over")
		workers := fs.Int("workers", 48, "parallel creates")
		_ = fs.Parse(os.Args[2:])
		cfg.QPS, cfg.Burst = 5000, 10000
		err = populate(ctx, cfg, *crs, *deps, *nss, *workers)
	case "types":
		err = printTypes(cfg)
	case "floor":
		fs := flag.NewFlagSet("floor", flag.ExitOnError)
		types := fs.String("types", "", "comma-separated types (as printed by benchlag types)")
		decode := fs.Bool("decode", false, "decode pages into unstructured objects (the dynamic client) instead of discarding the bytes")
		cache := fs.Bool("cache", false, "read the first page from the watch cache (resourceVersion=0), as lag --cache does")
		_ = fs.Parse(os.Args[2:])
		err = floor(ctx, cfg, strings.Split(*types, ","), *decode, *cache)
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchlag:", err)
	os.Exit(1)
}

var (
	nsGVR     = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	crdGVR    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	widgetGVR = schema.GroupVersionResource{Group: Group, Version: "v1", Resource: "widgets"}
	deployGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

func populate(ctx context.Context, cfg *rest.Config, crs, deps, nss, workers int) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets." + Group},
		"spec": map[string]any{
			"group": Group, "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
	if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the CRD: %w", err)
	}
	for i := range nss {
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": fmt.Sprintf("bench-%02d", i)}}}
		if _, err := dyn.Resource(nsGVR).Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating namespace: %w", err)
		}
	}
	// Wait until the CRD is served.
	for deadline := time.Now().Add(60 * time.Second); ; {
		_, err := dyn.Resource(widgetGVR).Namespace("bench-00").List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the widgets CRD is not served: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	start := time.Now()
	if err := createAll(ctx, dyn, widgetGVR, crs, nss, workers, widget); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "created %d widgets in %s\n", crs, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	if err := createAll(ctx, dyn, deployGVR, deps, nss, workers, deployment); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "created %d deployments in %s\n", deps, time.Since(start).Round(time.Millisecond))
	return nil
}

// widget is a custom resource of realistic size; one in a thousand lags
// (its status says it observed generation 0).
func widget(i int) *unstructured.Unstructured {
	observed := int64(1)
	if i%1000 == 999 {
		observed = 0
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": Group + "/v1", "kind": "Widget",
		"metadata": map[string]any{
			"name":   fmt.Sprintf("widget-%06d", i),
			"labels": map[string]any{"app": "bench", "shard": fmt.Sprintf("s%d", i%16)},
		},
		"spec": map[string]any{
			"size": int64(i % 100), "color": "blue", "replicas": int64(3),
			"template": map[string]any{"image": "registry.example/widget:v1.2.3", "args": []any{"--verbose", "--port=8080"}},
		},
		"status": map[string]any{
			"observedGeneration": observed,
			"conditions": []any{map[string]any{
				"type": "Ready", "status": "True", "reason": "Reconciled", "observedGeneration": observed,
				"lastTransitionTime": "2026-01-01T00:00:00Z", "message": "the widget is ready",
			}},
		},
	}}
}

func deployment(i int) *unstructured.Unstructured {
	name := fmt.Sprintf("web-%05d", i)
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"app": name}},
		"spec": map[string]any{
			"replicas": int64(0),
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "nginx", "image": "nginx:1.27",
					"ports":     []any{map[string]any{"containerPort": int64(80)}},
					"resources": map[string]any{"requests": map[string]any{"cpu": "10m", "memory": "16Mi"}},
				}}},
			},
		},
	}}
}

func createAll(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, n, nss, workers int, mk func(int) *unstructured.Unstructured) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				ns := fmt.Sprintf("bench-%02d", i%nss)
				if _, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, mk(i), metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("creating %s %d: %w", gvr.Resource, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func printTypes(cfg *rest.Config) error {
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	ts, _, err := lag.Discover(d, true)
	if err != nil {
		return err
	}
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name()
	}
	fmt.Println(strings.Join(names, ","))
	return nil
}

// floor lists every type in pages of 500, four types at a time (as lag
// does), and either discards the bytes or decodes them with the dynamic
// client.
func floor(ctx context.Context, cfg *rest.Config, types []string, decode, cache bool) error {
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	groups, err := restmapper.GetAPIGroupResources(d)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	rc := rest.CopyConfig(cfg)
	rc.APIPath, rc.GroupVersion = "/", nil
	rc.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc.AcceptContentTypes = "application/json"
	raw, err := rest.UnversionedRESTClientFor(rc)
	if err != nil {
		return err
	}
	var objects, bytes atomic.Int64
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	errs := make(chan error, len(types))
	for _, t := range types {
		gvr, err := mapper.ResourceFor(schema.ParseGroupResource(t).WithVersion(""))
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			opts := metav1.ListOptions{Limit: 500}
			if cache {
				opts.ResourceVersion = "0"
			}
			for {
				var cont string
				if decode {
					l, err := dyn.Resource(gvr).List(ctx, opts)
					if err != nil {
						errs <- err
						return
					}
					objects.Add(int64(len(l.Items)))
					cont = l.GetContinue()
				} else {
					path := "/apis/" + gvr.Group + "/" + gvr.Version + "/" + gvr.Resource
					if gvr.Group == "" {
						path = "/api/" + gvr.Version + "/" + gvr.Resource
					}
					body, err := raw.Get().AbsPath(path).SpecificallyVersionedParams(&opts, scheme.ParameterCodec, metav1.Unversioned).DoRaw(ctx)
					if err != nil {
						errs <- err
						return
					}
					bytes.Add(int64(len(body)))
					cont = continueToken(body)
				}
				if cont == "" {
					return
				}
				opts.Continue, opts.ResourceVersion = cont, ""
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "floor: %d types, %d objects decoded, %d bytes read\n", len(types), objects.Load(), bytes.Load())
	return nil
}

// continueToken finds metadata.continue in a list response without
// decoding the items: built-in lists put their metadata first, custom
// resource lists (sorted keys) last.
func continueToken(body []byte) string {
	const key = `"continue":"`
	s := string(body)
	i := strings.Index(s[:min(len(s), 2048)], key)
	if i < 0 {
		i = strings.LastIndex(s, key)
	}
	if i < 0 {
		return ""
	}
	rest := s[i+len(key):]
	if j := strings.IndexByte(rest, '"'); j >= 0 {
		return rest[:j]
	}
	return ""
}
