package doctor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/metadata"

	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// listed is one list answer, or the error instead.
type listed struct {
	list    *metav1.PartialObjectMetadataList
	err     error
	elapsed time.Duration
}

// code is the HTTP status of the answer: 200, or the error's.
func (l listed) code() int32 {
	if l.err == nil {
		return 200
	}
	return statusCode(l.err)
}

func statusCode(err error) int32 {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return st.Status().Code
	}
	return 0
}

func list(ctx context.Context, ri metadata.ResourceInterface, opts metav1.ListOptions) listed {
	start := time.Now()
	l, err := ri.List(ctx, opts)
	return listed{list: l, err: err, elapsed: time.Since(start)}
}

// probeLists runs the list checks. base is the consistent list every other
// check starts from; when it fails, the rest are skipped.
func (p *prober) probeLists(ctx context.Context, base listed) []Check {
	if base.err != nil {
		return []Check{fail(ListConsistent, fmt.Sprintf("a consistent list failed: %v", base.err), "code", itoa(base.code()))}
	}
	rv := base.list.ResourceVersion
	out := []Check{judgeConsistent(base)}
	out = append(out, p.checkAny(ctx))
	out = append(out, p.checkNotOlderThan(ctx, rv))
	out = append(out, p.checkExact(ctx, rv))
	out = append(out, judgeExactExpired(p.exactAtExpired(ctx)))
	out = append(out, p.checkFuture(ctx, rv))
	out = append(out, judgeItemsHaveRV(base.list), judgeCoversItems(base.list))
	out = append(out, p.checkPaging(ctx, len(base.list.Items)))
	out = append(out, judgeComparable(base.list))
	return out
}

func judgeConsistent(l listed) Check {
	if l.list.ResourceVersion == "" {
		return fail(ListConsistent, "the consistent list carried no resourceVersion: a client cannot watch from it", "items", strconv.Itoa(len(l.list.Items)))
	}
	return pass(ListConsistent, fmt.Sprintf("resourceVersion %s, %s, in %s", l.list.ResourceVersion, text.Plural(len(l.list.Items), "item"), ms(l.elapsed)),
		"resourceVersion", l.list.ResourceVersion, "items", strconv.Itoa(len(l.list.Items)), "ms", msValue(l.elapsed))
}

func (p *prober) checkAny(ctx context.Context) Check {
	l := list(ctx, p.ri, metav1.ListOptions{ResourceVersion: "0"})
	if l.err != nil {
		return fail(ListAny, fmt.Sprintf(`a list at resourceVersion "0" failed: %v`, l.err), "code", itoa(l.code()))
	}
	return pass(ListAny, fmt.Sprintf("resourceVersion %s, %s", l.list.ResourceVersion, text.Plural(len(l.list.Items), "item")),
		"resourceVersion", l.list.ResourceVersion, "items", strconv.Itoa(len(l.list.Items)))
}

func (p *prober) checkNotOlderThan(ctx context.Context, rv string) Check {
	l := list(ctx, p.ri, metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if l.err != nil {
		return fail(ListNotOlderThan, fmt.Sprintf("a list not older than %s failed: %v", rv, l.err), "asked", rv, "code", itoa(l.code()))
	}
	got := l.list.ResourceVersion
	c, err := resourceversion.CompareResourceVersion(got, rv)
	switch {
	case err != nil:
		return skip(ListNotOlderThan, fmt.Sprintf("asked not older than %s, got %s: not comparable (%v)", rv, got, err), "asked", rv, "got", got)
	case c < 0:
		return fail(ListNotOlderThan, fmt.Sprintf("asked not older than %s, got the older %s", rv, got), "asked", rv, "got", got)
	}
	return pass(ListNotOlderThan, fmt.Sprintf("asked not older than %s, got %s", rv, got), "asked", rv, "got", got)
}

// checkExact asks for the version just before the list's: a server that
// ignores resourceVersionMatch answers the newest instead.
func (p *prober) checkExact(ctx context.Context, rv string) Check {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil || n < 2 {
		return skip(ListExact, fmt.Sprintf("resourceVersion %q is not an integer above 1: no earlier version to ask for", rv), "list", rv)
	}
	asked := strconv.FormatUint(n-1, 10)
	l := list(ctx, p.ri, metav1.ListOptions{ResourceVersion: asked, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	switch {
	case l.err != nil && l.code() == 410:
		return skip(ListExact, fmt.Sprintf("version %s is already compacted (410)", asked), "asked", asked, "code", "410")
	case l.err != nil:
		return fail(ListExact, fmt.Sprintf("an exact list at %s failed: %v", asked, l.err), "asked", asked, "code", itoa(l.code()))
	case l.list.ResourceVersion != asked:
		return fail(ListExact, fmt.Sprintf("asked exactly %s, got %s: resourceVersionMatch=Exact was not honoured", asked, l.list.ResourceVersion),
			"asked", asked, "got", l.list.ResourceVersion)
	}
	return pass(ListExact, fmt.Sprintf("asked exactly %s, got %s", asked, asked), "asked", asked, "got", asked)
}

// expiredRV is a version every store that was ever compacted has lost: an
// empty etcd starts at revision 1.
const expiredRV = "1"

// exactAtExpired lists exactly at expiredRV; the answer says whether the
// store still holds that version, which the watch-expired check needs too.
// It is asked once per resource.
func (p *prober) exactAtExpired(ctx context.Context) listed {
	if p.expired == nil {
		l := list(ctx, p.ri, metav1.ListOptions{ResourceVersion: expiredRV, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		p.expired = &l
	}
	return *p.expired
}

func judgeExactExpired(l listed) Check {
	switch {
	case l.code() == 410:
		return pass(ListExactExpired, "an exact list at resourceVersion 1 answered 410 Gone", "asked", expiredRV, "code", "410")
	case l.err == nil:
		return skip(ListExactExpired, "resourceVersion 1 is still readable: the store was never compacted, so nothing has expired yet",
			"asked", expiredRV, "code", "200", "got", l.list.ResourceVersion)
	}
	return fail(ListExactExpired, fmt.Sprintf("an exact list at resourceVersion 1 answered %d, not 410 Gone: %v", l.code(), l.err),
		"asked", expiredRV, "code", itoa(l.code()))
}

// futureDistance is how far past the list's version the future probe asks.
const futureDistance = 1_000_000

func (p *prober) checkFuture(ctx context.Context, rv string) Check {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return skip(ListFuture, fmt.Sprintf("resourceVersion %q is not an integer: no future version to ask for", rv), "list", rv)
	}
	asked := strconv.FormatUint(n+futureDistance, 10)
	l := list(ctx, p.ri, metav1.ListOptions{ResourceVersion: asked, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	values := []string{"asked", asked, "code", itoa(l.code()), "ms", msValue(l.elapsed)}
	switch {
	case l.err == nil:
		return fail(ListFuture, fmt.Sprintf("a list not older than the future version %s answered 200 with resourceVersion %s", asked, l.list.ResourceVersion),
			append(values, "got", l.list.ResourceVersion)...)
	case l.code() == 504 && strings.Contains(l.err.Error(), "Too large resource version"):
		return pass(ListFuture, fmt.Sprintf("answered %q after %s", l.err.Error(), ms(l.elapsed)), values...)
	}
	return fail(ListFuture, fmt.Sprintf("a list not older than the future version %s answered %d, not 504 Too large resource version: %v", asked, l.code(), l.err), values...)
}

func judgeItemsHaveRV(l *metav1.PartialObjectMetadataList) Check {
	var missing []metav1.PartialObjectMetadata
	for _, it := range l.Items {
		if it.ResourceVersion == "" {
			missing = append(missing, it)
		}
	}
	if len(missing) > 0 {
		return fail(ItemsHaveRV, fmt.Sprintf("%d of %d items carry no resourceVersion, e.g. %s", len(missing), len(l.Items), objectName(missing[0])),
			append([]string{"items", strconv.Itoa(len(l.Items)), "missing", strconv.Itoa(len(missing))}, itemValues(missing[0])...)...)
	}
	return pass(ItemsHaveRV, fmt.Sprintf("%s, each with one", text.Plural(len(l.Items), "item")), "items", strconv.Itoa(len(l.Items)), "missing", "0")
}

func judgeCoversItems(l *metav1.PartialObjectMetadataList) Check {
	newest, name := "", ""
	for _, it := range l.Items {
		if it.ResourceVersion == "" {
			continue
		}
		if c, err := resourceversion.CompareResourceVersion(it.ResourceVersion, l.ResourceVersion); err == nil && c > 0 {
			return fail(ListCoversItems, fmt.Sprintf("item %s has resourceVersion %s, newer than the list's %s", objectName(it), it.ResourceVersion, l.ResourceVersion),
				append([]string{"list", l.ResourceVersion, "newestItem", it.ResourceVersion}, itemValues(it)...)...)
		}
		if newest == "" || compareOrZero(it.ResourceVersion, newest) > 0 {
			newest, name = it.ResourceVersion, objectName(it)
		}
	}
	switch {
	case len(l.Items) == 0:
		return skip(ListCoversItems, "no items to compare", "list", l.ResourceVersion)
	case newest == "":
		return skip(ListCoversItems, "no item carries a resourceVersion to compare", "list", l.ResourceVersion)
	}
	return pass(ListCoversItems, fmt.Sprintf("list %s, newest item %s (%s)", l.ResourceVersion, newest, name), "list", l.ResourceVersion, "newestItem", newest)
}

func judgeComparable(l *metav1.PartialObjectMetadataList) Check {
	bad, seen := "", 1
	if !comparable(l.ResourceVersion) {
		bad = "the list's " + strconv.Quote(l.ResourceVersion)
	}
	for _, it := range l.Items {
		if it.ResourceVersion == "" {
			continue
		}
		seen++
		if bad == "" && !comparable(it.ResourceVersion) {
			bad = fmt.Sprintf("%s's %q", objectName(it), it.ResourceVersion)
		}
	}
	if bad != "" {
		return fail(ComparableRVs, "not a comparable resourceVersion: "+bad, "checked", strconv.Itoa(seen))
	}
	return pass(ComparableRVs, fmt.Sprintf("%s, all comparable integers", text.Plural(seen, "resourceVersion")), "checked", strconv.Itoa(seen))
}

// comparable reports whether rv follows KEP-5504's form.
func comparable(rv string) bool {
	_, err := resourceversion.CompareResourceVersion(rv, rv)
	return err == nil
}

func compareOrZero(a, b string) int {
	c, err := resourceversion.CompareResourceVersion(a, b)
	if err != nil {
		return 0
	}
	return c
}

// itemValues are the Check.Values that name the object a failure is
// about: "itemName" and, for a namespaced one, "itemNamespace".
func itemValues(o metav1.PartialObjectMetadata) []string {
	if o.Namespace == "" {
		return []string{"itemName", o.Name}
	}
	return []string{"itemNamespace", o.Namespace, "itemName", o.Name}
}

func objectName(o metav1.PartialObjectMetadata) string {
	if o.Namespace != "" {
		return o.Namespace + "/" + o.Name
	}
	return o.Name
}
