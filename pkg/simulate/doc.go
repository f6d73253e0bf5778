// Package simulate runs Kubernetes optimistic-concurrency scenarios
// offline, in virtual time: actors (clients with a field manager, a write
// method, a change, a rate and a retry policy) read and write objects
// through an in-memory API server (pkg/simulate/apiserver: storage, watch
// and list; its write rules are pkg/writepath's, the ones predict --offline
// runs too) over an embedded etcd-exact revision store (pkg/mvcc), or a real etcd
// (pkg/etcdclient).
//
// The engine is a discrete-event driver: one event queue ordered by
// (virtual time, sequence), one seeded random source per client, no
// goroutines and no wall clock, so the same scenario and seed give the same
// Result byte for byte. Requests take a latency drawn from the scenario;
// the server handles each one at half its round trip, so a client's read
// and its write can be overtaken by others, which is where 409s come from.
//
// Each replica of a scenario actor is one actor: a writer (read, change,
// write, retry on 409 as client-go's RetryOnConflict does), a leader
// candidate (client-go's leader election on a Lease) or a watcher (an
// informer's reflector: list, watch, relist on 410). A writer computes its
// change on the object read and then encodes it the way its method sends
// it (update, merge, strategic or JSON patch, apply); fields are addressed
// with fieldpath.Path (pkg/managedfields reads and writes them).
//
// Lost updates are found by invariants: a counter that every successful
// increment moves must end at its start plus the successes, and each
// state carries which increments it contains so the lost ones are
// attributed to their actors (see counter).
//
// Package simulate owns the engine, the actors and the reports. It does not
// own the store (mvcc), the API server (apiserver) and its write rules
// (pkg/writepath), the scenario format
// (scenario), rendering (pkg/output/simprint) or watch recordings and their
// history (pkg/inspect).
package simulate
