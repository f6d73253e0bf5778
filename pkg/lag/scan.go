package lag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Scan lists every target, page by page and Config.Concurrency types at
// once, and returns the report. A type the user may not list (403), or that
// vanished (404), becomes a warning and a partial result; any other failure
// ends the scan with an error naming the type.
func Scan(ctx context.Context, cfg Config, client Client, targets []Target) (*Report, error) {
	now := cfg.Now()
	rep := &Report{Now: now, Types: make([]TypeSummary, len(targets))}
	var objects, done atomic.Int64
	// Each type's goroutine writes only its own index of items and rep.Types.
	items := make([][]Item, len(targets))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(cfg.Concurrency, 1))
	stopProgress := startProgress(gctx, cfg, len(targets), &objects, &done)
	defer stopProgress()
	for i, t := range targets {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			ts := newTypeScan(t, cfg, now)
			rv, err := scanType(gctx, cfg, client, t, func(o Object) {
				objects.Add(1)
				ts.add(o)
			})
			done.Add(1)
			ts.finish()
			ts.sum.listRV = rv
			if err != nil {
				if !partial(err) {
					return fmt.Errorf("listing %s: %w", t.Name(), err)
				}
				ts.sum.Error = err.Error()
			}
			rep.Types[i], items[i] = ts.sum, ts.items
			return nil
		})
	}
	err := g.Wait()
	stopProgress()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return rep, assemble(rep, items)
}

// assemble gathers the types' items into rep, sorted, and warns about the
// types that could not be listed: an error when none could.
func assemble(rep *Report, items [][]Item) error {
	failed := 0
	for i, t := range rep.Types {
		rep.Items = append(rep.Items, items[i]...)
		if t.Error != "" {
			failed++
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: %s; the results are partial", t.Name(), t.Error))
		}
	}
	if failed > 0 && failed == len(rep.Types) {
		return fmt.Errorf("no type could be listed: %w", ErrAllRefused)
	}
	SortItems(rep.Items)
	return nil
}

// ErrAllRefused is returned (with the report) when every type was refused.
var ErrAllRefused = errors.New("every type was refused (403) or not found")

// partial reports whether a list error leaves the rest of the scan valid.
func partial(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err)
}

// SortItems orders items by type, namespace and name.
func SortItems(items []Item) {
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
}

// scanType lists one type page by page, calling fn for every object, and
// returns the list's resourceVersion.
func scanType(ctx context.Context, cfg Config, client Client, t Target, fn func(Object)) (string, error) {
	opts := metav1.ListOptions{
		LabelSelector: cfg.LabelSelector,
		FieldSelector: cfg.FieldSelector,
		Limit:         cfg.ChunkSize,
	}
	if cfg.FromCache {
		opts.ResourceVersion = "0"
	}
	var listRV string
	for {
		body, err := client.List(ctx, t, cfg.Namespace, opts)
		if err != nil {
			return listRV, err
		}
		meta, err := decodeList(body, cfg.For == RolledOut, fn)
		body.Close()
		if err != nil {
			return listRV, err
		}
		if listRV == "" {
			listRV = meta.ResourceVersion
		}
		if meta.Continue == "" {
			return listRV, nil
		}
		// A continued list reads the first page's snapshot; it must not
		// name a resourceVersion.
		opts.Continue, opts.ResourceVersion = meta.Continue, ""
	}
}

// decodeList reads a list response as a stream: one item at a time, so a
// page never sits in memory whole. With keepRaw each object carries its
// JSON, for the rollout check.
func decodeList(r io.Reader, keepRaw bool, fn func(Object)) (metav1.ListMeta, error) {
	var lm metav1.ListMeta
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return lm, err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return lm, fmt.Errorf("decoding the list: %w", err)
		}
		key, _ := tok.(string)
		switch key {
		case "items":
			tok, err := dec.Token()
			if err != nil {
				return lm, fmt.Errorf("decoding the list: %w", err)
			}
			if tok == nil { // "items": null
				continue
			}
			if d, ok := tok.(json.Delim); !ok || d != '[' {
				return lm, fmt.Errorf("decoding the list: items is not an array")
			}
			for dec.More() {
				o, err := decodeItem(dec, keepRaw)
				if err != nil {
					return lm, fmt.Errorf("decoding the list: %w", err)
				}
				fn(o)
			}
			if _, err := dec.Token(); err != nil {
				return lm, fmt.Errorf("decoding the list: %w", err)
			}
		case "metadata":
			if err := dec.Decode(&lm); err != nil {
				return lm, fmt.Errorf("decoding the list metadata: %w", err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return lm, fmt.Errorf("decoding the list: %w", err)
			}
		}
	}
	return lm, nil
}

// decodeItem decodes the next list item, with its JSON when keepRaw.
func decodeItem(dec *json.Decoder, keepRaw bool) (Object, error) {
	if !keepRaw {
		var raw rawObject
		if err := dec.Decode(&raw); err != nil {
			return Object{}, err
		}
		return raw.object(), nil
	}
	var data json.RawMessage
	if err := dec.Decode(&data); err != nil {
		return Object{}, err
	}
	return DecodeObject(data)
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("decoding the list: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("decoding the list: want %q, got %v", want, tok)
	}
	return nil
}

// startProgress reports progress to cfg.Progress once the scan has run for
// cfg.ProgressAfter; the returned function stops it and reports the end.
// It is safe to call more than once.
func startProgress(ctx context.Context, cfg Config, types int, objects, done *atomic.Int64) func() {
	if cfg.Progress == nil {
		return func() {}
	}
	stop := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		wrote := false
		timer := time.NewTimer(cfg.ProgressAfter)
		defer timer.Stop()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		started := false
		for {
			select {
			case <-ctx.Done():
			case <-stop:
			case <-timer.C:
				started = true
				continue
			case <-tick.C:
				if started {
					cfg.Progress(ScanProgress{TypesDone: int(done.Load()), Types: types, Objects: objects.Load()})
					wrote = true
				}
				continue
			}
			if wrote {
				cfg.Progress(ScanProgress{TypesDone: int(done.Load()), Types: types, Objects: objects.Load(), Done: true})
			}
			return
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(stop); <-finished })
	}
}
