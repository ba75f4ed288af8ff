// Package endpoint resolves what the model adapters take from their Config or the
// environment: the base URL and the API key.
package endpoint

import (
	"fmt"
	"net/url"
	"os"
)

// Resolve returns the base URL to use: configured, else the environment variable
// env, else def. It fails, naming provider and showing example, when the URL is
// not an absolute http or https URL.
func Resolve(provider, configured, env, def, example string) (string, *url.URL, error) {
	endpoint := configured
	if endpoint == "" {
		endpoint = os.Getenv(env)
	}
	if endpoint == "" {
		endpoint = def
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", nil, fmt.Errorf("%s: base URL %q is not an absolute http or https URL (such as %s)", provider, endpoint, example)
	}
	return endpoint, u, nil
}

// Key returns configured, else the environment variable env ("" when neither is set).
func Key(configured, env string) string {
	if configured != "" {
		return configured
	}
	return os.Getenv(env)
}
