package auth_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcs-go/mcs/middleware/auth"
)

func TestEnvVarName(t *testing.T) {
	tests := []struct{ scope, want string }{
		{"github", "MCS_TOKEN_GITHUB"},
		{"my-api.v2", "MCS_TOKEN_MY_API_V2"},
		{"Already_UPPER_9", "MCS_TOKEN_ALREADY_UPPER_9"},
		{"a b/c", "MCS_TOKEN_A_B_C"},
		{"café", "MCS_TOKEN_CAF_"},
		{"", "MCS_TOKEN_"},
	}
	for _, tt := range tests {
		if got := auth.EnvVarName(tt.scope); got != tt.want {
			t.Errorf("EnvVarName(%q) = %q, want %q", tt.scope, got, tt.want)
		}
	}
}

func TestStaticProvider(t *testing.T) {
	tests := []struct {
		name    string
		tokens  map[string]string
		env     map[string]string
		scope   string
		want    string
		wantErr []string // substrings of the error; nil means no error
	}{
		{"map", map[string]string{"github": "from-map"}, nil, "github", "from-map", nil},
		{"map before environment", map[string]string{"github": "from-map"}, map[string]string{"MCS_TOKEN_GITHUB": "from-env"}, "github", "from-map", nil},
		{"environment", nil, map[string]string{"MCS_TOKEN_GITHUB": "from-env"}, "github", "from-env", nil},
		{"environment name mapping", nil, map[string]string{"MCS_TOKEN_MY_API_V2": "from-env"}, "my-api.v2", "from-env", nil},
		{"empty map value falls back", map[string]string{"github": ""}, map[string]string{"MCS_TOKEN_GITHUB": "from-env"}, "github", "from-env", nil},
		{"other scope in map", map[string]string{"gitlab": "SECRET-gitlab"}, nil, "github", "", []string{`"github"`, "MCS_TOKEN_GITHUB"}},
		{"empty environment counts as missing", nil, map[string]string{"MCS_TOKEN_GITHUB": ""}, "github", "", []string{"MCS_TOKEN_GITHUB"}},
		{"empty scope", map[string]string{"": "SECRET-empty"}, nil, "", "", []string{"scope is empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("MCS_TOKEN_GITHUB", "")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			p := auth.NewStaticProvider(tt.tokens)
			got, err := p.Token(t.Context(), tt.scope)
			if got != tt.want {
				t.Errorf("Token = %q, want %q", got, tt.want)
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Errorf("Token error = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, auth.ErrNoCredential) {
				t.Fatalf("Token error = %v, want one wrapping ErrNoCredential", err)
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("error %q reveals a token", err)
			}
		})
	}
}

func TestStaticProviderCopiesMap(t *testing.T) {
	t.Setenv("MCS_TOKEN_GITHUB", "")
	m := map[string]string{"github": "before"}
	p := auth.NewStaticProvider(m)
	m["github"] = "after"
	delete(m, "github")
	if got, err := p.Token(t.Context(), "github"); got != "before" || err != nil {
		t.Errorf("Token = %q, %v; want the value at construction", got, err)
	}
}

func TestStaticProviderZeroValue(t *testing.T) {
	t.Setenv("MCS_TOKEN_GITHUB", "from-env")
	var p auth.StaticProvider
	if got, err := p.Token(t.Context(), "github"); got != "from-env" || err != nil {
		t.Errorf("Token = %q, %v; want the environment's token", got, err)
	}
}
