package stack

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"
)

func TestTableGetters(t *testing.T) {
	data := []byte(`s = "x"
list = ["a", "b"]
one = "single"
mixed = ["a", 1]
n = 5
big = 500
d = "1m30s"
badd = "soon"
neg = "-1s"
m = {A = "1", B = "2"}
badm = {A = 1}
rel = "sub/file.txt"
abs = "/etc/file"
url = "https://example.com/x"
sub = {k = true}
`)
	var raw map[string]any
	if err := toml.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	tb := newTable("f.toml", "dir", "", "[t]", raw, indexPositions(data))
	if got := tb.String("s"); got != "x" {
		t.Errorf("String = %q", got)
	}
	if diff := cmp.Diff([]string{"a", "b"}, tb.Strings("list")); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff([]string{"single"}, tb.Strings("one")); diff != "" {
		t.Error(diff)
	}
	if tb.Strings("mixed") != nil {
		t.Error("mixed list accepted")
	}
	if got := tb.Int("n", 1, 10); got != 5 {
		t.Errorf("Int = %d", got)
	}
	if got := tb.Int("big", 1, 10); got != 0 {
		t.Errorf("Int out of range = %d", got)
	}
	if got := tb.Duration("d"); got != 90*time.Second {
		t.Errorf("Duration = %v", got)
	}
	tb.Duration("badd")
	tb.Duration("neg")
	if diff := cmp.Diff(map[string]string{"A": "1", "B": "2"}, tb.StringMap("m")); diff != "" {
		t.Error(diff)
	}
	tb.StringMap("badm")
	if got := tb.Path("rel"); got != "dir/sub/file.txt" {
		t.Errorf("Path(rel) = %q", got)
	}
	if got := tb.Path("abs"); got != "/etc/file" {
		t.Errorf("Path(abs) = %q", got)
	}
	if got := tb.Path("url"); got != "https://example.com/x" {
		t.Errorf("Path(url) = %q", got)
	}
	if !tb.Sub("sub", "[t.sub]").Bool("k") {
		t.Error("Sub lost its value")
	}
	if tb.String("absent") != "" || tb.Bool("absent2") {
		t.Error("absent keys are not zero")
	}
	got := problems(t, tb.Err())
	want := []string{
		`f.toml:4: [t], key "mixed": element 2 must be a string (got an integer)`,
		`f.toml:6: [t], key "big": is 500; use a value from 1 to 10`,
		`f.toml:8: [t], key "badd": "soon" is not a duration; write one such as "30s" or "2m"`,
		`f.toml:9: [t], key "neg": "-1s" is not a duration; write one such as "30s" or "2m"`,
		`f.toml:11: [t], key "badm": entry "A" must be a string (got an integer)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if strings.Contains(strings.Join(got, "\n"), "unknown key") {
		t.Error("a key that was asked for is reported unknown")
	}
}
