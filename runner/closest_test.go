package runner

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClosest(t *testing.T) {
	names := []string{"pets__findPetsByStatus", "pets__addPet", "files__read_file", "files__write_file", "get_weather"}
	tests := []struct {
		call string
		want []string
	}{
		{"findPetsByStatus", []string{"pets__findPetsByStatus", "pets__addPet", "get_weather"}},
		{"read_file", []string{"files__read_file", "files__write_file", "pets__addPet"}},
		{"weather__get_weather", []string{"get_weather", "pets__addPet", "files__read_file"}},
		{"get_wether", []string{"get_weather", "pets__addPet", "files__read_file"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, closest(tt.call, names)); diff != "" {
			t.Errorf("closest(%q) (-want +got):\n%s", tt.call, diff)
		}
	}
	if got := closestText("x", nil); got != "no tools are available" {
		t.Errorf("closestText with no tools = %q", got)
	}
}
