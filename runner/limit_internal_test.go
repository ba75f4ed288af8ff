package runner

import (
	"encoding/json"
	"testing"
)

// A chunk counts the same decoded and as JSON text.
func TestPayloadBytesDecodedAndRaw(t *testing.T) {
	for _, raw := range []string{
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
		`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"c1","function":{"name":"get_time","arguments":"{\"zone\""}}]},"finish_reason":null}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"n":12.5,"ok":true,"list":["a","bc"]}}}]}}]}`,
		`{}`,
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		// Escaped quotes count as written in the text and once decoded.
		escapes := 0
		for i := 0; i+1 < len(raw); i++ {
			if raw[i] == '\\' {
				escapes++
				i++
			}
		}
		if d, r := payloadBytes(m), payloadBytes(json.RawMessage(raw)); d != r-escapes {
			t.Errorf("%s: decoded %d, raw %d (%d escapes)", raw, d, r, escapes)
		}
	}
	if n := payloadBytes(`{"type":"text_delta","text":"abc"}`); n != 3 {
		t.Errorf("labels counted: %d", n)
	}
	if n := payloadBytes("plain text"); n != 10 {
		t.Errorf("plain text: %d", n)
	}
}
