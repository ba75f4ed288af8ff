package rest_test

import (
	"testing"

	"github.com/mcs-go/mcs/drivers/rest"
	"github.com/mcs-go/mcs/mcstest"
)

// TestConformance runs the tool driver and the complete driver, over the
// petstore document and its loopback server, through the conformance kit.
func TestConformance(t *testing.T) {
	api := petstoreServer()
	defer api.Close()
	probes := []mcstest.Probe{
		{Tool: "listPets", Args: map[string]any{"limit": 2.0}},
		{Tool: "listPets", Args: map[string]any{"bogus": 1.0}, Invalid: true},
		{Tool: "deletePet", Args: map[string]any{}, Invalid: true},
	}
	cfg := rest.Config{SpecURL: api.URL + "/openapi.yaml"}
	td, err := rest.NewToolDriver(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := mcstest.TestToolDriver(td, probes...); err != nil {
		t.Error(err)
	}
	d, err := rest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := mcstest.TestToolDriver(d, probes...); err != nil {
		t.Error(err)
	}
}
