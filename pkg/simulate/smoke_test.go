package simulate

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
)

func TestSmoke(t *testing.T) {
	name := os.Getenv("SIM")
	if name == "" {
		name = "two-clients"
	}
	sc, err := scenario.LoadBuiltin(name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, Config{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	t.Log(string(b))
}
