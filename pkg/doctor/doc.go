// Package doctor checks that API endpoints keep the resourceVersion contract
// clients rely on (kubectl rv doctor): for each group/version/resource it
// lists (consistent, any, NotOlderThan, Exact, expired, future, paged) and
// watches (bookmarks, the streaming list's initial-events-end bookmark, an
// expired start) through the metadata client, times consistent lists
// against cached ones, and returns a verdict per check with what it saw
// (Run). With several API servers it holds them to each other
// (cross-server-rvs): Run finds those that answer from here, named
// (Config.APIServers) or among the kubernetes Service's endpoints. Checks
// lists every check with the contract it holds the endpoint to and the
// clients that break without it.
//
// Only reads are sent, except by Report.WriteProbe, which creates, updates
// and deletes one ConfigMap when the user asks for it.
//
// Package doctor does not discover types (pkg/apitypes does), resolve
// flags (pkg/cmd) or print (pkg/output/doctorprint).
//
// Example: a server whose newest revision is 500 answers a list at
// resourceVersion "" with 500; NotOlderThan 500 with 500 or newer; Exact
// 499 with exactly 499; Exact 1 with 410 Gone once compacted; NotOlderThan
// 1000500 with 504 "Too large resource version" after about 3 s.
package doctor
