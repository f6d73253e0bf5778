package ownersprint

import (
	"fmt"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/objects"
)

// NewObjects decodes the ownership of every object, applies the filter and
// returns what the renderers need. An object without managedFields, or with
// an invalid entry, is an error naming the object, and its file and line
// when it was read from a file.
func NewObjects(objs []objects.Object, filter managedfields.Filter) ([]Object, error) {
	out := make([]Object, 0, len(objs))
	for _, obj := range objs {
		own, err := managedfields.Build(obj.Object)
		if err != nil {
			where := obj.Describe()
			if obj.Source.File != "" {
				where = fmt.Sprintf("%s: %s", obj.Source, describe(Object{Object: obj.Object}))
			}
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		filtered := own.Filtered(filter)
		var entries []managedfields.Entry
		for _, e := range own.Entries() {
			if filter.KeepsEntry(e) {
				entries = append(entries, e)
			}
		}
		src := ""
		if obj.Source.File != "" {
			src = obj.Source.String()
		}
		out = append(out, Object{
			Object:    obj.Object,
			Source:    src,
			Ownership: filtered,
			Entries:   entries,
			Hazards:   managedfields.FilterHazards(own.Hazards(), filter, filtered),
		})
	}
	return out, nil
}
