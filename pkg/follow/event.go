package follow

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// EventType is the type of an Event.
type EventType string

// The event types. ADDED, MODIFIED, DELETED and BOOKMARK are watch events as
// the API server sent them. LIST is one object of a list (the initial list,
// or the relist after a 410 Gone); SYNCED ends that list.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	Bookmark EventType = "BOOKMARK"
	List     EventType = "LIST"
	Synced   EventType = "SYNCED"
)

// SyncReason says why a list was made.
type SyncReason string

// The sync reasons.
const (
	// SyncInitial is the list made at start (not made with a Since).
	SyncInitial SyncReason = "initial"
	// SyncRelist is the list made after the API server answered 410 Gone:
	// the events between the last resourceVersion seen and the list's
	// resourceVersion are lost.
	SyncRelist SyncReason = "relist"
)

// Event is what the driver received: the unit the engines' trackers
// consume, and one line of a watch recording after its header (pkg/inspect
// reads and writes them; the JSON is stable, see docs/watch.md).
//
// Example (one line each in a recording; objects shortened):
//
//	{"type":"LIST","time":"...","resource":"apps/v1/deployments","reason":"initial","object":{...,"metadata":{"resourceVersion":"812",...}}}
//	{"type":"SYNCED","time":"...","resource":"apps/v1/deployments","reason":"initial","resourceVersion":"815"}
//	{"type":"MODIFIED","time":"...","resource":"apps/v1/deployments","object":{...,"metadata":{"resourceVersion":"830",...}}}
//	{"type":"SYNCED","time":"...","resource":"apps/v1/deployments","reason":"relist","resourceVersion":"990","gapFrom":"830"}
type Event struct {
	Type EventType `json:"type"`
	// Time is when kubectl-rv received the event.
	Time time.Time `json:"time"`
	// Resource is group/version/resource ("apps/v1/deployments", "v1/pods").
	Resource string `json:"resource"`
	// Reason is set on LIST and SYNCED.
	Reason SyncReason `json:"reason,omitempty"`
	// ResourceVersion is the bookmark's RV (BOOKMARK) or the list's RV (SYNCED).
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// GapFrom is, on a SYNCED relist, the last resourceVersion seen before the
	// 410 Gone: the events after it and up to ResourceVersion were lost.
	GapFrom string `json:"gapFrom,omitempty"`
	// GapError is the API server's message for the 410 Gone.
	GapError string `json:"gapError,omitempty"`
	// Object is the object (ADDED, MODIFIED, DELETED, LIST), with
	// managedFields; Secret values are redacted unless the Config says not.
	Object *unstructured.Unstructured `json:"object,omitempty"`
}
