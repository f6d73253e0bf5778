// Package pitquery is the search body pkg/audit/pitsearch sends, as the
// local Elasticsearch and OpenSearch servers of the tests read it, and
// the filter it asks for applied to a document. Only tests import it.
package pitquery

import "time"

// Body is the search as pitsearch.Body writes it, as a test server
// reads it.
type Body struct {
	Size  *int `json:"size"`
	Query struct {
		Bool struct {
			Filter []struct {
				Bool *struct {
					Should []struct {
						Match map[string]string `json:"match"`
					} `json:"should"`
				} `json:"bool"`
				Range map[string]map[string]string `json:"range"`
			} `json:"filter"`
		} `json:"bool"`
	} `json:"query"`
	Pit *struct {
		ID        string `json:"id"`
		KeepAlive string `json:"keep_alive"`
	} `json:"pit"`
	Sort        []map[string]string `json:"sort"`
	SearchAfter []int               `json:"search_after"`
	Source      struct {
		Excludes []string `json:"excludes"`
	} `json:"_source"`
}

// Matches says whether a document of these fields passes the search's
// filter (the verbs' and stages' match queries, the time range), and
// ranged whether the filter had a time range.
func (b *Body) Matches(fields map[string]string) (ok, ranged bool) {
	for _, f := range b.Query.Bool.Filter {
		if f.Bool != nil {
			any := false
			for _, m := range f.Bool.Should {
				for k, v := range m.Match {
					any = any || fields[k] == v
				}
			}
			if !any {
				return false, ranged
			}
		}
		for k, r := range f.Range {
			ranged = true
			at, _ := time.Parse(time.RFC3339Nano, fields[k])
			if gte, err := time.Parse(time.RFC3339Nano, r["gte"]); err == nil && at.Before(gte) {
				return false, ranged
			}
			if lt, err := time.Parse(time.RFC3339Nano, r["lt"]); err == nil && !at.Before(lt) {
				return false, ranged
			}
		}
	}
	return true, ranged
}
