package stack

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcs-go/mcs/internal/origin"
)

// otlpDefaultTimeout is the OTLP exporters' own default for one export.
const otlpDefaultTimeout = 10 * time.Second

// otlpHTTPClient returns the HTTP client of the OTLP exporter for endpoint, the
// value of the stack file's key (otlp_endpoint, otlp_metrics_endpoint); signal is
// TRACES or METRICS.
//
// The exporters' own client follows every redirect, and Go's client keeps custom
// headers on a redirect to any host: a collector answering 307 elsewhere would
// get the spans sent there with the OTEL_EXPORTER_OTLP_HEADERS, which often hold
// the collector's key. This client follows a redirect only within the endpoint's
// origin (scheme, host, port; at most 10) and refuses any other with an error
// that names the key to fix. A client of one's own replaces the exporter's
// handling of the environment, so the client does what the exporter would: TLS
// from OTEL_EXPORTER_OTLP_[SIGNAL_]CERTIFICATE, CLIENT_CERTIFICATE and
// CLIENT_KEY, the limit of one export from OTEL_EXPORTER_OTLP_[SIGNAL_]TIMEOUT
// (milliseconds; default 10 s), the signal's own variable winning over the
// generic one; proxies from the environment as http.DefaultTransport. A variable
// that cannot be used is an error naming it.
func otlpHTTPClient(endpoint *url.URL, key, signal string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	cfg, err := otlpTLS(signal)
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		tr.TLSClientConfig = cfg
	}
	timeout := otlpDefaultTimeout
	if name, v := otlpEnv(signal, "TIMEOUT"); name != "" {
		ms, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("%s = %q: want the limit of one export in milliseconds, such as 10000", name, v)
		}
		timeout = time.Duration(ms) * time.Millisecond // 0: no limit
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: origin.Redirects(endpoint, nil,
			func(target, home *url.URL) error {
				t := *target
				t.User, t.RawQuery, t.Fragment = nil, "", ""
				return fmt.Errorf("%s: the collector redirected to %s, another origin than %s; nothing was sent there, the OTLP headers included: if that is the collector, set %s to it", key, t.String(), origin.String(home), key)
			},
			func() error {
				return fmt.Errorf("%s: the collector redirected %d times; set %s to the collector's own address", key, origin.MaxRedirects, key)
			}),
	}, nil
}

// otlpEnv returns the name and value of OTEL_EXPORTER_OTLP_<signal>_<what>, else
// of OTEL_EXPORTER_OTLP_<what>; "" when neither is set.
func otlpEnv(signal, what string) (name, value string) {
	for _, n := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_" + what, "OTEL_EXPORTER_OTLP_" + what} {
		if v, ok := os.LookupEnv(n); ok && v != "" {
			return n, v
		}
	}
	return "", ""
}

// otlpTLS returns the TLS configuration the certificate variables ask for; nil
// when none is set.
func otlpTLS(signal string) (*tls.Config, error) {
	caName, caFile := otlpEnv(signal, "CERTIFICATE")
	certName, certFile := otlpEnv(signal, "CLIENT_CERTIFICATE")
	keyName, keyFile := otlpEnv(signal, "CLIENT_KEY")
	if caName == "" && certName == "" && keyName == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caName != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", caName, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: %s holds no PEM certificate", caName, caFile)
		}
		cfg.RootCAs = pool
	}
	switch {
	case certName != "" && keyName != "":
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("%s and %s: %w", certName, keyName, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	case certName != "":
		return nil, fmt.Errorf("%s is set without a client key; set %s too", certName, strings.Replace(certName, "CLIENT_CERTIFICATE", "CLIENT_KEY", 1))
	case keyName != "":
		return nil, fmt.Errorf("%s is set without a client certificate; set %s too", keyName, strings.Replace(keyName, "CLIENT_KEY", "CLIENT_CERTIFICATE", 1))
	}
	return cfg, nil
}
