package audit

import "time"

// Event is the part of an audit.k8s.io/v1 Event that conflicts analysis
// reads. Bodies are not part of it.
type Event struct {
	AuditID    string
	Stage      string
	Verb       string
	RequestURI string
	// Username is user.username, or impersonatedUser.username when the
	// request was impersonated (kubectl --as): the user the write is for.
	Username string
	// PodName is user.extra["authentication.kubernetes.io/pod-name"][0]:
	// the replica of a service-account writer.
	PodName   string
	UserAgent string
	ObjectRef ObjectRef
	// Code is responseStatus.code; 0 when the event has no status.
	Code    int
	Reason  string
	Message string
	// DetailsKind is responseStatus.details.kind (resourcequotas for the
	// quota's own 409 on a create).
	DetailsKind string
	// ResponseRV is responseObject.metadata.resourceVersion: the version a
	// write produced or a read returned. Only RequestResponse-level events
	// have it.
	ResponseRV      string
	RequestReceived time.Time
	StageTimestamp  time.Time
	// Host is the API server replica that logged the event, where the
	// log's lines name it (HOST {json}, as oc adm node-logs prints them);
	// "" otherwise.
	Host string
	// idHash is idHash(e) when Decode set it, else 0; objHash and
	// clientHash are objectHash(e) and clientHash(e) when Decode set them
	// (Options.KeyHashes), else zero.
	idHash              uint64
	objHash, clientHash KeyHash
}

// eventStrings is how many strings an Event holds (Event.strings).
const eventStrings = 19

// strings are the event's strings, for a caller that moves them to other
// memory. TestEventStringsAreAll holds it to the fields.
func (e *Event) strings() [eventStrings]*string {
	r := &e.ObjectRef
	return [eventStrings]*string{&e.AuditID, &e.Stage, &e.Verb, &e.RequestURI, &e.Username, &e.PodName, &e.UserAgent,
		&r.Resource, &r.Namespace, &r.Name, &r.APIGroup, &r.APIVersion, &r.Subresource, &r.ResourceVersion,
		&e.Reason, &e.Message, &e.DetailsKind, &e.ResponseRV, &e.Host}
}

// ObjectHash is the KeyHash of the event's object: its API group,
// resource, namespace and name.
func (e *Event) ObjectHash() KeyHash {
	if e.objHash.a != 0 {
		return e.objHash
	}
	return objectHash(e)
}

// ClientHash is the KeyHash of the event's client: its user, pod name and
// user agent.
func (e *Event) ClientHash() KeyHash {
	if e.clientHash.a != 0 {
		return e.clientHash
	}
	return clientHash(e)
}

func objectHash(e *Event) KeyHash {
	r := &e.ObjectRef
	return hashKey(r.APIGroup, r.Resource, r.Namespace, r.Name)
}

func clientHash(e *Event) KeyHash {
	return hashKey(e.Username, e.PodName, e.UserAgent)
}

// ObjectRef is the object a request was about.
type ObjectRef struct {
	Resource    string `json:"resource"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	APIGroup    string `json:"apiGroup"`
	APIVersion  string `json:"apiVersion"`
	Subresource string `json:"subresource"`
	// ResourceVersion is, for update and create only, the precondition the
	// client sent, not the version the write produced.
	ResourceVersion string `json:"resourceVersion"`
}

// PodNameKey is the user.extra key that names a service account's pod.
const PodNameKey = "authentication.kubernetes.io/pod-name"

// The stages Decode hands on.
const (
	StageResponseComplete = "ResponseComplete"
	StagePanic            = "Panic"
)

// wireEvent is the JSON shape decoded: the fields not named here, and the
// bodies (requestObject, the rest of responseObject), are skipped.
type wireEvent struct {
	Kind                     string     `json:"kind"`
	APIVersion               string     `json:"apiVersion"`
	AuditID                  string     `json:"auditID"`
	Stage                    string     `json:"stage"`
	RequestURI               string     `json:"requestURI"`
	Verb                     string     `json:"verb"`
	User                     wireUser   `json:"user"`
	ImpersonatedUser         *wireUser  `json:"impersonatedUser"`
	UserAgent                string     `json:"userAgent"`
	ObjectRef                ObjectRef  `json:"objectRef"`
	ResponseStatus           wireStatus `json:"responseStatus"`
	ResponseObject           wireObject `json:"responseObject"`
	RequestReceivedTimestamp time.Time  `json:"requestReceivedTimestamp"`
	StageTimestamp           time.Time  `json:"stageTimestamp"`
}

// wireStatus is the part of a Status read (responseStatus, or a refused
// request's response body).
type wireStatus struct {
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Details struct {
		Kind string `json:"kind"`
	} `json:"details"`
}

// wireObject is the part of an object read: its resourceVersion.
type wireObject struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
}

type wireUser struct {
	Username string              `json:"username"`
	Extra    map[string][]string `json:"extra"`
}

func (w *wireEvent) event() Event {
	e := Event{
		AuditID: w.AuditID, Stage: w.Stage, Verb: w.Verb, RequestURI: w.RequestURI,
		Username: w.User.Username, UserAgent: w.UserAgent, ObjectRef: w.ObjectRef,
		Code: w.ResponseStatus.Code, Reason: w.ResponseStatus.Reason, Message: w.ResponseStatus.Message,
		DetailsKind: w.ResponseStatus.Details.Kind, ResponseRV: w.ResponseObject.Metadata.ResourceVersion,
		RequestReceived: w.RequestReceivedTimestamp, StageTimestamp: w.StageTimestamp,
	}
	u := &w.User
	if w.ImpersonatedUser != nil {
		u = w.ImpersonatedUser
		e.Username = u.Username
	}
	if p := u.Extra[PodNameKey]; len(p) > 0 {
		e.PodName = p[0]
	}
	return e
}
