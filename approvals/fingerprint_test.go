package approvals_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
)

func TestFingerprint(t *testing.T) {
	args := map[string]any{"city": "Paris", "days": json.Number("3"), "opts": map[string]any{"units": "metric", "alerts": true}}
	base := approvals.Fingerprint("weather", weatherTool, args)
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(base) {
		t.Fatalf("Fingerprint = %q; want 64 hex digits (SHA-256)", base)
	}
	with := func(change func(*mcs.Tool)) mcs.Tool {
		tool := weatherTool
		tool.Parameters = append([]mcs.Parameter(nil), weatherTool.Parameters...)
		change(&tool)
		return tool
	}
	for _, tc := range []struct {
		name  string
		label string
		tool  mcs.Tool
		args  map[string]any
		same  bool
	}{
		{"the same call", "weather", weatherTool, map[string]any{"opts": map[string]any{"alerts": true, "units": "metric"}, "days": json.Number("3"), "city": "Paris"}, true},
		{"a number of the same text", "weather", weatherTool, map[string]any{"city": "Paris", "days": 3, "opts": map[string]any{"units": "metric", "alerts": true}}, true},
		{"annotations are hints", "weather", with(func(tl *mcs.Tool) { tl.Annotations = &mcs.ToolAnnotations{ReadOnly: true} }), args, true},
		{"another label", "weather2", weatherTool, args, false},
		{"no label", "", weatherTool, args, false},
		{"another value", "weather", weatherTool, map[string]any{"city": "Lyon", "days": json.Number("3"), "opts": map[string]any{"units": "metric", "alerts": true}}, false},
		{"a nested value", "weather", weatherTool, map[string]any{"city": "Paris", "days": json.Number("3"), "opts": map[string]any{"units": "metric", "alerts": false}}, false},
		{"a number written otherwise", "weather", weatherTool, map[string]any{"city": "Paris", "days": json.Number("3.0"), "opts": map[string]any{"units": "metric", "alerts": true}}, false},
		{"a number as a string", "weather", weatherTool, map[string]any{"city": "Paris", "days": "3", "opts": map[string]any{"units": "metric", "alerts": true}}, false},
		{"an extra argument", "weather", weatherTool, map[string]any{"city": "Paris", "days": json.Number("3"), "opts": map[string]any{"units": "metric", "alerts": true}, "x": nil}, false},
		{"a missing argument", "weather", weatherTool, map[string]any{"city": "Paris", "days": json.Number("3")}, false},
		{"no arguments", "weather", weatherTool, nil, false},
		{"tool name", "weather", with(func(tl *mcs.Tool) { tl.Name = "get_weather2" }), args, false},
		{"title", "weather", with(func(tl *mcs.Tool) { tl.Title = "Weather" }), args, false},
		{"description", "weather", with(func(tl *mcs.Tool) { tl.Description += " Now with rain." }), args, false},
		{"parameter name", "weather", with(func(tl *mcs.Tool) { tl.Parameters[0].Name = "town" }), args, false},
		{"parameter description", "weather", with(func(tl *mcs.Tool) { tl.Parameters[0].Description = "The city." }), args, false},
		{"parameter required", "weather", with(func(tl *mcs.Tool) { tl.Parameters[1].Required = true }), args, false},
		{"parameter schema", "weather", with(func(tl *mcs.Tool) { tl.Parameters[1].Schema = map[string]any{"type": "integer", "maximum": 7} }), args, false},
		{"parameter order", "weather", with(func(tl *mcs.Tool) { tl.Parameters[0], tl.Parameters[1] = tl.Parameters[1], tl.Parameters[0] }), args, false},
		{"a parameter more", "weather", with(func(tl *mcs.Tool) { tl.Parameters = append(tl.Parameters, mcs.Parameter{Name: "lang"}) }), args, false},
		// The parts cannot run into each other.
		{"label text moved into the tool", "weathe", with(func(tl *mcs.Tool) { tl.Name = "rget_weather" }), args, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := approvals.Fingerprint(tc.label, tc.tool, tc.args)
			if (got == base) != tc.same {
				t.Errorf("Fingerprint = %s, base %s: same = %v, want %v", got, base, got == base, tc.same)
			}
		})
	}
}
