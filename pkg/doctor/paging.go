package doctor

import (
	"context"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// maxPages bounds the paging probe's requests on a large collection.
const maxPages = 3

// checkPaging lists in about maxPages pages and holds them against one
// exact list at the first page's version: a consistent snapshot has the
// same version on every page and the same items, once each.
func (p *prober) checkPaging(ctx context.Context, items int) Check {
	if items < 2 {
		return skip(Paging, fmt.Sprintf("%s: nothing to page", text.Plural(items, "item")), "items", strconv.Itoa(items))
	}
	limit := int64((items + maxPages - 1) / maxPages)
	pages, seen, rv := 0, map[string]int{}, ""
	opts := metav1.ListOptions{Limit: limit}
	for {
		l := list(ctx, p.ri, opts)
		if l.err != nil {
			return fail(Paging, fmt.Sprintf("page %d (limit %d) failed: %v", pages+1, limit, l.err), "limit", itoa64(limit), "code", itoa(l.code()))
		}
		pages++
		if pages == 1 {
			rv = l.list.ResourceVersion
		} else if l.list.ResourceVersion != rv {
			return fail(Paging, fmt.Sprintf("page %d has resourceVersion %s, the first page had %s: the pages are not one snapshot", pages, l.list.ResourceVersion, rv),
				"firstPage", rv, "page", l.list.ResourceVersion)
		}
		for _, it := range l.list.Items {
			seen[objectName(it)]++
		}
		if l.list.Continue == "" || pages > items {
			break
		}
		opts = metav1.ListOptions{Limit: limit, Continue: l.list.Continue}
	}
	return p.judgePages(ctx, rv, pages, limit, seen)
}

func (p *prober) judgePages(ctx context.Context, rv string, pages int, limit int64, seen map[string]int) Check {
	values := []string{"pages", strconv.Itoa(pages), "limit", itoa64(limit), "resourceVersion", rv, "paged", strconv.Itoa(len(seen))}
	for name, n := range seen {
		if n > 1 {
			return fail(Paging, fmt.Sprintf("%s came %d times across %d pages", name, n, pages), values...)
		}
	}
	whole := list(ctx, p.ri, metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if whole.err != nil {
		return skip(Paging, fmt.Sprintf("%d pages at %s, but the whole list at that version could not be read to compare: %v", pages, rv, whole.err), values...)
	}
	var missing []string
	for _, it := range whole.list.Items {
		if seen[objectName(it)] == 0 {
			missing = append(missing, objectName(it))
		}
	}
	values = append(values, "whole", strconv.Itoa(len(whole.list.Items)))
	if len(missing) > 0 || len(seen) != len(whole.list.Items) {
		return fail(Paging, fmt.Sprintf("%d pages at %s held %d items, the whole list at that version %d", pages, rv, len(seen), len(whole.list.Items)), values...)
	}
	return pass(Paging, fmt.Sprintf("%d pages of at most %d at resourceVersion %s: %d items, each once", pages, limit, rv, len(seen)), values...)
}
