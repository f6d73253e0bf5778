// Package leases is the engine of kubectl rv leases: leader election seen
// from outside. It reads leader-election locks (coordination.k8s.io/v1
// Leases, and the legacy annotation control-plane.alpha.kubernetes.io/leader
// on Endpoints and ConfigMaps) and the LeaseCandidates of coordinated
// leader election, and says who leads, since when, how healthy its
// renewals are, every takeover, and former leaders that kept acting.
//
// It has three entry points, one per source of history:
//
//   - Now: one look (no history): each lock's holder, held since, last
//     renewal's age against the lease duration (the slack), transitions,
//     and the LeaseCandidates naming each Lease. A cluster that serves no
//     LeaseCandidate API (FindCandidateResource returns nil) is fine.
//   - Watch: a watch of Leases through the one watch core (follow.Stream:
//     list, watch, resume, relist after 410 Gone, gaps), fed to Tracker,
//     the deterministic core, which counts renewals (interval median and
//     p99, the smallest slack, late renewals whose slack was under a third
//     of the duration), expiries and takeovers.
//   - History: the Lease writes of an audit log (pkg/audit), fed to
//     HistoryBuilder: a successful write by another writer than the last is
//     a takeover, a 409 a candidate trying; writers are named as kubectl rv
//     conflicts names them (audit.WriterOf). It also finds former
//     holders writing other objects after they lost the lock (Acting): two
//     replicas acting as leader. A holder whose identity several clients
//     may share (audit.Shared, the notion conflicts marks rows by) proves
//     nothing: its windows are SharedWriters, not Acting.
//
// Both histories share one bookkeeping (book.go), so a takeover, a late
// renewal and an expiry mean the same in both.
//
// Example: Lease kube-system/kube-scheduler, 15s, renewed every 2s by
// node-1_ab12: renewals with intervals of 2s (slack 13s). node-1 freezes
// after its renewal at 10:00:04; the lease expires at 10:00:19; node-2
// takes it at 10:00:20.1 (a takeover after expiry, unheld 1.1s). If
// node-1 wakes at 10:00:25 and updates configmap cfg before noticing,
// its write is acting while not leader, 6s after it lost the lock.
//
// Package leases does not parse flags (pkg/cmd) or print
// (pkg/output/leasesprint), and it never writes to the cluster.
package leases
