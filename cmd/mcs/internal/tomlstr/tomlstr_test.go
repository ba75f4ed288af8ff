package tomlstr

import (
	"testing"

	"github.com/pelletier/go-toml/v2"
)

func TestQuoteRoundTrips(t *testing.T) {
	for _, s := range []string{"", "plain", `C:\dir\"x"`, "line\nbreak\ttab\x7f", "héllo"} {
		var v struct{ K string }
		if err := toml.Unmarshal([]byte("K = "+Quote(s)), &v); err != nil || v.K != s {
			t.Errorf("Quote(%q) = %s, decodes to %q, %v", s, Quote(s), v.K, err)
		}
	}
}
