package mcs

import "testing"

func TestToolClone(t *testing.T) {
	orig := Tool{Name: "t", Parameters: []Parameter{{Name: "p", Schema: map[string]any{"enum": []any{"a"}}}},
		Annotations: &ToolAnnotations{ReadOnly: true}}
	c := orig.Clone()
	c.Parameters[0].Name = "q"
	c.Parameters[0].Schema["enum"].([]any)[0] = "b"
	c.Annotations.ReadOnly = false
	if orig.Parameters[0].Name != "p" || orig.Parameters[0].Schema["enum"].([]any)[0] != "a" || !orig.Annotations.ReadOnly {
		t.Errorf("changing the clone changed the original: %+v", orig)
	}
	if (Tool{}).Clone().Parameters != nil {
		t.Error("a tool without parameters gained some")
	}
}
