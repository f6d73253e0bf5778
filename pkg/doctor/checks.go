package doctor

// The checks, by ID.
const (
	ListConsistent        = "list-consistent"
	ListAny               = "list-any"
	ListNotOlderThan      = "list-not-older-than"
	ListExact             = "list-exact"
	ListExactExpired      = "list-exact-expired"
	ListFuture            = "list-future"
	ItemsHaveRV           = "items-have-rv"
	ListCoversItems       = "list-rv-covers-items"
	Paging                = "paging"
	ComparableRVs         = "comparable-rvs"
	WatchBookmarks        = "watch-bookmarks"
	InitialEventsEnd      = "watch-initial-events-end"
	WatchExpired          = "watch-expired"
	WatchStorageCompacted = "watch-storage-compacted"
	WatchEventsHaveRV     = "watch-events-have-rv"
	CrossServerRVs        = "cross-server-rvs"
	ConsistentLatency     = "consistent-list-latency"
	WriteRVsIncreasing    = "write-rvs-increase"
)

// CheckInfo describes a check for --help, docs and the report.
type CheckInfo struct {
	ID string `json:"id"`
	// Contract is what the endpoint must do.
	Contract string `json:"contract"`
	// Breaks names the clients that break when it does not.
	Breaks string `json:"breaks"`
	// Fix is the one-line fix of a failure, for the reports that give one
	// (the CI formats' rules).
	Fix string `json:"fix"`
}

// Checks lists every check in the order they run and are shown.
var Checks = []CheckInfo{
	{ListConsistent, `a list with resourceVersion "" (a consistent read) succeeds and names its resourceVersion`,
		"every informer and reflector: they list this way when they start and whenever they relist",
		"make the endpoint answer consistent lists: the server's, aggregated API's or conversion webhook's error says what fails"},
	{ListAny, `a list with resourceVersion "0" (any version, from the watch cache) succeeds`,
		"controllers and caches that start from resourceVersion 0 to spare the server a consistent read",
		"serve lists at resourceVersion \"0\" (from a cache, or as a consistent read); an aggregated API server should use the generic apiserver's storage"},
	{ListNotOlderThan, "a list with resourceVersionMatch=NotOlderThan at the list's own version answers that version or a newer one",
		"reflectors that resume from a version they saw",
		"honour resourceVersionMatch=NotOlderThan: answer the version asked for or a newer one, never an older one"},
	{ListExact, "a list with resourceVersionMatch=Exact at an earlier version answers exactly that version",
		"clients that re-read a snapshot: paging, consistent reads at a version",
		"honour resourceVersionMatch=Exact (that version, or 410 Gone); a proxy in front of the server must pass the parameter through"},
	{ListExactExpired, "a list with resourceVersionMatch=Exact at a compacted version answers 410 Gone",
		"clients that relist on 410; without it they take an old answer for an exact one",
		"answer an Exact list at a compacted version with 410 Gone (Expired), as kube-apiserver over etcd does"},
	{ListFuture, `a list at a version far in the future answers "Too large resource version" (504) instead of waiting or answering`,
		"clients that wait to read their own writes (kubernetes/kubernetes#94315)",
		"answer a version ahead of the store with 504 \"Too large resource version\" after a bounded wait, as kube-apiserver's watch cache does"},
	{ItemsHaveRV, "every item of a list carries metadata.resourceVersion",
		"caches and GitOps engines that compare item versions (argoproj/gitops-engine#704)",
		"set metadata.resourceVersion on every item of a list: a proxy or aggregated server must not drop it"},
	{ListCoversItems, "the list's resourceVersion is not older than any item's",
		"informers that watch from the list's version: newer items are replayed or lost",
		"give a list the resourceVersion of the snapshot it was read at, never older than its newest item"},
	{Paging, "pages (limit and continue) are one consistent snapshot: same resourceVersion, no item twice, none missing",
		"kubectl get (--chunk-size 500 by default) and every paging client (folio-pro/kdashboard#70)",
		"serve every page of a list from one snapshot: the continue token must carry the first page's resourceVersion"},
	{ComparableRVs, "resourceVersions are positive integers without leading zeros, comparable within the resource",
		"clients from 1.35 on that compare resourceVersions (KEP-5504)",
		"issue resourceVersions as positive decimal integers without leading zeros that grow with every write (etcd revisions do)"},
	{WatchBookmarks, "a watch with allowWatchBookmarks from just before the list's version sends a BOOKMARK before it times out",
		"informers that resume after a restart without a full relist",
		"send a BOOKMARK to watches that ask for them (allowWatchBookmarks), as kube-apiserver's watch cache does"},
	{InitialEventsEnd, "a streaming list (sendInitialEvents=true) ends its initial events with a BOOKMARK annotated k8s.io/initial-events-end",
		"client-go 0.35+ informers, which stream lists by default and hang without it (gravitational/teleport#64188, antrea-io/antrea#8123, cozystack/cozystack#2786)",
		"end a streaming list's initial events with the BOOKMARK annotated k8s.io/initial-events-end: \"true\", or refuse sendInitialEvents so that clients fall back to list and watch"},
	{WatchExpired, "a watch from a compacted version answers 410 Gone (Expired), or delivers every object that exists since: nothing is lost",
		"reflectors that resume from an old version: without the 410 they never relist, and objects the watch skipped are missing from their caches for good (kubernetes/kubernetes#94315)",
		"answer a watch from a compacted version with 410 Gone (Expired), so that reflectors relist"},
	{WatchStorageCompacted, "a watch served by storage (Events have no watch cache) from the oldest revision the store still holds delivers every change since, without an error",
		"every informer of the type after a restart or a 410: kube-apiserver over kine answers 500 \"etcd event received with PrevKv=nil\" after compaction, and the reflector retries forever",
		"make the storage backend serve a watch from its compact revision without an error: kine must keep what a watch from there needs, or answer 410 Gone"},
	{WatchEventsHaveRV, "every watch event's object carries a comparable resourceVersion, and one watch's events do not go backwards",
		"every reflector: it resumes from the last event's resourceVersion, and without one it relists (a front proxy or aggregated server that drops it)",
		"keep metadata.resourceVersion on every watch event's object, in order: a proxy or aggregated server must not drop or rewrite it"},
	{CrossServerRVs, "with several API servers (--api-servers): a resourceVersion read from one is never \"too large\" for another, nor newer than what another lists a moment later",
		"clients behind a load balancer that fail over between API servers: a 504 or an older answer makes them relist or read the past",
		"serve every API server from the same storage, and keep a server out of the load balancer until its watch cache has synced"},
	{ConsistentLatency, "a consistent list is not much slower than a cached one",
		"every consistent LIST waits about 3 s on backends without progress notifications (canonical/microk8s#5568, k3s-io/kine#250)",
		"turn on the storage's watch progress notifications (etcd --watch-progress-notify-interval), or use a backend that sends them, so that consistent lists are served from the watch cache"},
	{WriteRVsIncreasing, "with --write-probe: a ConfigMap's resourceVersions increase across create, updates and delete, and its watch sees them in order",
		"every client that orders events by resourceVersion",
		"issue increasing resourceVersions for one object's successive writes, and deliver its watch events in that order"},
}

// Info returns the description of the check id, and whether it exists.
func Info(id string) (CheckInfo, bool) {
	for _, c := range Checks {
		if c.ID == id {
			return c, true
		}
	}
	return CheckInfo{}, false
}
