package redact

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// textCase is a text and what Text makes of it.
type textCase struct{ name, in, want string }

func checkText(t *testing.T, r *Redactor, known []string, cases []textCase) {
	t.Helper()
	for _, tt := range cases {
		if got := r.Text(tt.in, known); got != tt.want {
			t.Errorf("%s: Text(%q)\n got %q\nwant %q", tt.name, tt.in, got, tt.want)
		}
	}
}

// An error that quotes a JSON body with Go's %q escapes its quotes; its pairs
// are pairs all the same.
func TestAttackGoQuotedJSONPairs(t *testing.T) {
	checkText(t, New(nil, 0), nil, []textCase{
		{"escaped quotes", `request body "{\"api_key\":\"sk-live-123\",\"n\":1}"`, `request body "{\"api_key\":\"[REDACTED]\",\"n\":1}"`},
		{"escaped quotes and a space", `{\"password\": \"hunter22\"}`, `{\"password\": \"[REDACTED]\"}`},
		{"quoted twice", `{\\\"token\\\":\\\"t-9876\\\"}`, `{\\\"token\\\":\\\"[REDACTED]\\\"}`},
		{"prose stays", `parameter \"token\": must be a string`, `parameter \"token\": must be a string`},
	})
}

// The password of a URL's user info is a secret whatever the scheme, and so
// is a user info that is a token alone.
func TestAttackURLUserInfo(t *testing.T) {
	checkText(t, New(nil, 0), nil, []textCase{
		{"database URL", `dial postgres://admin:x@db:5432/app: refused`, `dial postgres://admin:[REDACTED]@db:5432/app: refused`},
		{"https", `fetch https://bob:s3cr3t-pw@example.com/x failed`, `fetch https://bob:[REDACTED]@example.com/x failed`},
		{"token as the user", `clone https://ghp_0123456789abcdefABCDEF@github.com/o/r.git`, `clone https://[REDACTED]@github.com/o/r.git`},
		{"a plain user stays", `ssh://git@github.com/o/r.git`, `ssh://git@github.com/o/r.git`},
		{"an address stays", `mailto:bob@example.com and http://example.com/@bob`, `mailto:bob@example.com and http://example.com/@bob`},
		{"empty password", `redis://:p4ss@cache:6379`, `redis://:[REDACTED]@cache:6379`},
	})
}

// key=, "key": and an argument named key hold API keys (Google's ?key=), and
// Azure's Ocp-Apim-Subscription-Key header is one.
func TestAttackKeyNames(t *testing.T) {
	r := New(nil, 0)
	checkText(t, r, nil, []textCase{
		{"query", `GET /maps/api/geocode?key=AIzaSyD-123456&address=x`, `GET /maps/api/geocode?key=[REDACTED]&address=x`},
		{"JSON", `{"key": "AIzaSyD-123456"}`, `{"key": "[REDACTED]"}`},
		{"subscription key header", `Ocp-Apim-Subscription-Key: 0123456789abcdef`, `Ocp-Apim-Subscription-Key: [REDACTED]`},
		{"a word with key in it stays", `monkey=banana keyboard=qwerty`, `monkey=banana keyboard=qwerty`},
	})
	in := map[string]any{
		"key":                       "AIzaSyD-123456",
		"Ocp-Apim-Subscription-Key": "0123456789abcdef",
		"headers":                   []any{map[string]any{"key": "Accept", "value": "json"}, map[string]any{"key": "X-Api-Key", "value": "k-1"}},
	}
	want := map[string]any{
		"key":                       Redacted,
		"Ocp-Apim-Subscription-Key": Redacted,
		"headers":                   []any{map[string]any{"key": "Accept", "value": "json"}, map[string]any{"key": "X-Api-Key", "value": Redacted}},
	}
	if diff := cmp.Diff(want, r.Value(in)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A PEM block's body is a key or a certificate: it goes, the armour lines stay,
// also with escaped line ends and when the text is cut before the end.
func TestAttackPEMBodies(t *testing.T) {
	body := "MIIEpAIBAAKCAQEA7Zq3\nw9Vh+/abc=\n"
	checkText(t, New(nil, 0), nil, []textCase{
		{"private key", "read:\n-----BEGIN RSA PRIVATE KEY-----\n" + body + "-----END RSA PRIVATE KEY-----\ndone",
			"read:\n-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----\ndone"},
		{"escaped line ends", `"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq\nhkiG9w0=\n-----END PRIVATE KEY-----\n"`,
			`"-----BEGIN PRIVATE KEY-----[REDACTED]-----END PRIVATE KEY-----\n"`},
		{"no end", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", "-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]"},
		{"encrypted, with headers", "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B\n\nMHcCAQEE\n-----END EC PRIVATE KEY-----",
			"-----BEGIN EC PRIVATE KEY-----[REDACTED]-----END EC PRIVATE KEY-----"},
	})
}

// The secret argument of a call comes back from a server in other spellings:
// upper or lower case, base64 (standard and URL-safe, padded or not, alone or
// inside the encoding of a longer text such as "user:secret"), and in JSON
// with escapes (\u0073k-..., \u002d, \/).
func TestAttackKnownSecretEchoes(t *testing.T) {
	r := New(nil, 0)
	_, known := r.Args(map[string]any{"api_key": "sk-Live-4f9a+b/c?d"})
	const secret = "sk-Live-4f9a+b/c?d"
	checkText(t, r, known, []textCase{
		{"upper case", "invalid key SK-LIVE-4F9A+B/C?D", "invalid key [REDACTED]"},
		{"lower case", "invalid key sk-live-4f9a+b/c?d", "invalid key [REDACTED]"},
		{"base64", "echo " + base64.StdEncoding.EncodeToString([]byte(secret)), "echo [REDACTED]"},
		{"base64 URL", "echo " + base64.URLEncoding.EncodeToString([]byte(secret)), "echo [REDACTED]"},
		{"base64 raw URL", "echo " + base64.RawURLEncoding.EncodeToString([]byte(secret)), "echo [REDACTED]"},
		{"JSON escapes", `{"echo":"\u0073\u006b\u002dLive-4f9a+b\/c?d"}`, `{"echo":"[REDACTED]"}`},
		{"JSON escapes, upper hex", `{"echo":"sk\u002DLive\u002D4f9a\u002Bb\u002Fc\u003Fd"}`, `{"echo":"[REDACTED]"}`},
	})
	_, known2 := r.Args(map[string]any{"password": "pässwört-😀-42"})
	checkText(t, r, known2, []textCase{
		{"escaped non-ASCII and a surrogate pair", `{"echo":"p\u00e4ssw\u00F6rt-\ud83d\ude00-42","n":1}`, `{"echo":"[REDACTED]","n":1}`},
		{"upper case", "PÄSSWÖRT-😀-42", "[REDACTED]"},
	})
	if got := ReplaceEscaped(`a \u0074\u006fken-1\/2 b`, []string{"token-1/2"}); got != "a "+Redacted+" b" {
		t.Errorf("ReplaceEscaped = %q", got)
	}
	// Inside the base64 of a longer text, the characters that encode only the
	// secret's bytes go; the one or two that mix in a neighbour's may stay.
	for _, prefix := range []string{"u:", "us:", "use:"} {
		enc := base64.StdEncoding.EncodeToString([]byte(prefix + secret))
		got := r.Text("echo "+enc, known)
		if got == "echo "+enc || !strings.Contains(got, Redacted) {
			t.Errorf("base64 of %q: Text kept %q", prefix+secret, got)
		}
		if strings.Contains(got, enc[8:16]) {
			t.Errorf("base64 of %q: %q left in %q", prefix+secret, enc[8:16], got)
		}
	}
}
