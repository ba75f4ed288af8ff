package openai_test

import (
	"net/http"
	"testing"

	"github.com/mcs-go/mcs/runner"
	"github.com/mcs-go/mcs/runner/internal/adaptertest"
	"github.com/mcs-go/mcs/runner/openai"
)

// A configured endpoint that redirects to another port on the same host, or from
// https to http, must not make the client send the key there.
func TestAttackRedirectTakesTheKeyElsewhere(t *testing.T) {
	adaptertest.RedirectTakesTheKeyElsewhere(t, "OPENAI_BASE_URL", func(baseURL string, client *http.Client) (runner.Model, error) {
		return openai.New(openai.Config{Model: "gpt-test", BaseURL: baseURL + "/v1", APIKey: "sk-secret", HTTPClient: client, MaxRetries: 1})
	})
}
