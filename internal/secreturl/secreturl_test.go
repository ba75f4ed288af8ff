package secreturl

import "testing"

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://mcs:s3cret@db.example.com:5432/tokens": "postgres://mcs:xxxxx@db.example.com:5432/tokens",
		"redis://:pw@127.0.0.1:6379/0":                     "redis://:xxxxx@127.0.0.1:6379/0",
		"postgres://mcs@db/tokens":                         "postgres://mcs@db/tokens",
		"sqlite:/var/lib/tokens.db":                        "sqlite:/var/lib/tokens.db",
		"http://host/path@not-userinfo":                    "http://host/path@not-userinfo",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
