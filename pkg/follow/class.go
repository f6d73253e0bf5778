package follow

// Class classifies a write: the one classification watch and churn share
// (docs/watch.md, docs/churn.md).
type Class string

// The classes of writes.
const (
	// Spec is a write that bumped metadata.generation.
	Spec Class = "spec"
	// Status is a write through /status, or one that changed only .status.
	Status Class = "status"
	// Metadata is a write that changed only .metadata (labels, annotations,
	// finalizers, owner references), or any other write to an object with a
	// generation that did not move: a spec change would have moved it.
	Metadata Class = "metadata"
	// Other is any other write to an object without a generation (a
	// ConfigMap's data, a Lease's holder).
	Other Class = "other"
)

// Parts are the top-level fields a write touched: the fields that changed
// when both versions are known (watch), or those its writer owns when only
// metadata is (churn).
type Parts uint8

// The parts of an object a write can touch.
const (
	PartMetadata Parts = 1 << iota
	PartStatus
	// PartOther is any other top-level field: spec, data, rules, ...
	PartOther
)

// PartOf returns the part a top-level field name belongs to.
func PartOf(field string) Parts {
	switch field {
	case "metadata":
		return PartMetadata
	case "status":
		return PartStatus
	}
	return PartOther
}

// Write is what Classify knows of a write.
type Write struct {
	// GenerationBumped says metadata.generation moved; HasGeneration that
	// the object has one.
	GenerationBumped, HasGeneration bool
	// Subresource is the writer's ("status" for /status), "" for the main
	// resource or an unknown writer.
	Subresource string
	// Touched are the parts the write touched; 0 when unknown.
	Touched Parts
}

// Classify classifies a write, in this order: spec when the generation
// moved; status when written through /status or touching only .status;
// metadata when touching only .metadata, or for any other write to an
// object with a generation; other for the rest.
//
// Example: the deployment controller's write through /status that also
// changes an annotation is status; a write of a ConfigMap's data is other;
// a label added to a Deployment is metadata.
func Classify(w Write) Class {
	switch {
	case w.GenerationBumped:
		return Spec
	case w.Subresource == "status", w.Touched == PartStatus:
		return Status
	case w.Touched == PartMetadata, w.HasGeneration:
		return Metadata
	}
	return Other
}
