package follow

import "testing"

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		w    Write
		want Class
	}{
		{"generation bumped", Write{GenerationBumped: true, HasGeneration: true, Touched: PartOther | PartMetadata}, Spec},
		{"generation bumped through /status stays spec", Write{GenerationBumped: true, HasGeneration: true, Subresource: "status"}, Spec},
		{"through /status", Write{HasGeneration: true, Subresource: "status", Touched: PartStatus}, Status},
		{"through /status, also an annotation", Write{HasGeneration: true, Subresource: "status", Touched: PartStatus | PartMetadata}, Status},
		{"only .status, main resource", Write{HasGeneration: true, Touched: PartStatus}, Status},
		{"only .status, no generation", Write{Touched: PartStatus}, Status},
		{"only .metadata", Write{HasGeneration: true, Touched: PartMetadata}, Metadata},
		{"only .metadata, no generation", Write{Touched: PartMetadata}, Metadata},
		{"status and annotation, main resource, generation", Write{HasGeneration: true, Touched: PartStatus | PartMetadata}, Metadata},
		{"nothing known, generation", Write{HasGeneration: true}, Metadata},
		{"data of a ConfigMap", Write{Touched: PartOther}, Other},
		{"data and a label of a ConfigMap", Write{Touched: PartOther | PartMetadata}, Other},
		{"nothing known, no generation", Write{}, Other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.w); got != tt.want {
				t.Errorf("Classify(%+v) = %s, want %s", tt.w, got, tt.want)
			}
		})
	}
}
