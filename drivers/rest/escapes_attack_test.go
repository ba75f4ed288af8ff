package rest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcs-go/mcs/middleware/auth"
)

// escapeAll writes every byte of s as a JSON \uXXXX escape, in lower or upper
// case hex digits.
func escapeAll(s string, upper bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if upper {
			fmt.Fprintf(&b, `\u%04X`, s[i])
		} else {
			fmt.Fprintf(&b, `\u%04x`, s[i])
		}
	}
	return b.String()
}

// TestAttackEchoedSecretInJSONEscapes: a server that echoes the credential in
// JSON with escapes of its own choosing (every character as \uXXXX, only the
// dashes, upper-case hex digits, "/" as "\/") does not show it to the model,
// in results and in a StatusError.
func TestAttackEchoedSecretInJSONEscapes(t *testing.T) {
	const tok = "tok-Secret/9-x"
	forms := []string{
		escapeAll(tok, false),
		escapeAll(tok, true),
		`tok\u002dSecret/9\u002dx`,
		`tok-Secret\/9-x`,
		`\u0074ok-Secret\/9\u002Dx`,
	}
	for _, status := range []int{200, 502} {
		api := newAPI(t, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			for _, f := range forms {
				fmt.Fprintf(w, "{\"echo\":\"%s\"}\n", f)
			}
		})
		td := mustToolDriver(t, Config{Spec: hostileSpec(""), BaseURL: api.URL, Name: "petstore",
			Credentials: auth.NewStaticProvider(map[string]string{"petstore": tok})})
		res, err := td.ExecuteTool(context.Background(), "listPets", nil)
		text := fmt.Sprint(res, err)
		if status != 200 {
			var se *StatusError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *StatusError", err)
			}
			text = se.Body
		}
		for i, f := range forms {
			if strings.Contains(text, f) {
				t.Errorf("status %d: form %d %q is shown:\n%s", status, i, f, text)
			}
		}
		if n := strings.Count(text, `{"echo":"`+redacted+`"}`); n != len(forms) {
			t.Errorf("status %d: %d of %d echoes redacted whole:\n%s", status, n, len(forms), text)
		}
	}
}
