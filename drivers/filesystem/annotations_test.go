package filesystem_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/filesystem"
)

// Every tool says what it does, so that a policy such as permission.ReadOnly can
// let reads run and ask for the rest.
func TestAnnotations(t *testing.T) {
	d, err := filesystem.NewToolDriver(filesystem.Config{Root: t.TempDir(), AllowDelete: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	list, _ := d.ListTools(context.Background())
	got := map[string]mcs.ToolAnnotations{}
	for _, tool := range list {
		if tool.Annotations == nil {
			t.Fatalf("%s has no annotations", tool.Name)
		}
		got[tool.Name] = *tool.Annotations
	}
	ro := mcs.ToolAnnotations{ReadOnly: true, Idempotent: true}
	want := map[string]mcs.ToolAnnotations{
		"list_directory": ro, "read_file": ro, "search_files": ro, "file_info": ro,
		"write_file":     {Destructive: true, Idempotent: true},
		"make_directory": {Idempotent: true},
		"move_file":      {Destructive: true},
		"delete_file":    {Destructive: true, Idempotent: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	def, ok, err := d.ToolDefinition(context.Background(), "read_file")
	if !ok || err != nil || def.Annotations == nil || !def.Annotations.ReadOnly {
		t.Errorf("ToolDefinition(read_file) = %+v, %v, %v", def, ok, err)
	}
}
