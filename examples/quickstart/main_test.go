package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestQuickstartOutput(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"You are a helpful assistant with access to the following tools:",
		"call read_note: \"milk, eggs, coffee\"",
		`call list_notes: {"titles":["groceries","ideas"]}`,
		`call delete_note: {"message":"User denied execution of 'delete_note'.","permission_denied":true,"tool":"delete_note"}`,
		`history: {"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"title\":\"ideas\"}","name":"delete_note"},"id":"call_7","type":"function"}]}`,
		"== an unknown tool\nexecuted=false failed=false\n(not this driver's call",
		"call read_note: error: no note titled \"taxes\"; call list_notes to see the titles",
		"retry prompt: The call to the tool 'read_note' failed: no note titled \"taxes\"",
		`  [log] -> read_note {"title":"groceries"}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q\n--- output ---\n%s", want, got)
		}
	}
	// The denied deletion never reached the log's "ok" of a real deletion, and the
	// unknown tool never reached the middleware.
	if strings.Contains(got, "send_email {") {
		t.Error("the unknown tool reached the middleware")
	}
}
