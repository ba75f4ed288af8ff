package stack

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/tracing"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

func init() {
	RegisterMiddlewareKind(MiddlewareKind{
		Name:    "tracing",
		Summary: "an OpenTelemetry span and a duration measurement per call (otlp_endpoint and otlp_metrics_endpoint = URL, or the application's providers; content = true records arguments and results, redacted)",
		Rank:    5,
		Decode:  decodeTracing,
	})
}

var _ MiddlewareConfig = (*tracingConfig)(nil)

// tracingShutdown bounds the flush of the spans when the stack closes.
const tracingShutdown = 5 * time.Second

type tracingConfig struct {
	endpoint        string // OTLP/HTTP traces; "" : the global tracer provider
	metricsEndpoint string // OTLP/HTTP metrics; "" : the global meter provider
	service         string
	opts            []tracing.Option
}

// decodeTracing reads [middleware.tracing]:
//
//	otlp_endpoint = "http://localhost:4318/v1/traces"          # OTLP/HTTP spans; "" : the global tracer provider
//	otlp_metrics_endpoint = "http://localhost:4318/v1/metrics" # OTLP/HTTP metrics; "" : the global meter provider
//	service_name = "mcs"                                       # the service.name of spans and metrics
//	content = false                                    # record arguments and results (redacted)
//	content_limit = 4096                               # bytes per content attribute
func decodeTracing(t *Table) MiddlewareConfig {
	c := &tracingConfig{endpoint: t.String("otlp_endpoint"), metricsEndpoint: t.String("otlp_metrics_endpoint"),
		service: t.String("service_name")}
	for key, example := range map[string]string{"otlp_endpoint": "http://localhost:4318/v1/traces",
		"otlp_metrics_endpoint": "http://localhost:4318/v1/metrics"} {
		if v := t.String(key); v != "" {
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				t.Errorf(key, "%q is not an http or https URL; use one such as %q", v, example)
			}
		}
	}
	if c.service == "" {
		c.service = "mcs"
	}
	if t.Bool("content") {
		c.opts = append(c.opts, tracing.WithContent())
	}
	if t.Has("content_limit") {
		c.opts = append(c.opts, tracing.WithContentLimit(int(t.Int("content_limit", 64, 1<<20))))
	}
	return c
}

func (c *tracingConfig) Middleware(ctx context.Context, b *Builder) (mcs.ToolMiddleware, error) {
	opts := slices.Clone(c.opts)
	res := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(c.service))
	if c.endpoint != "" {
		client, err := otlpClientFor(c.endpoint, "otlp_endpoint", "TRACES")
		if err != nil {
			return nil, err
		}
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(c.endpoint), otlptracehttp.WithHTTPClient(client))
		if err != nil {
			return nil, fmt.Errorf("otlp exporter for %s: %w", c.endpoint, err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		flushOnClose(b, "spans", c.endpoint, tp.Shutdown) // what is still in the batch
		opts = append(opts, tracing.WithTracerProvider(tp))
	}
	if c.metricsEndpoint != "" {
		client, err := otlpClientFor(c.metricsEndpoint, "otlp_metrics_endpoint", "METRICS")
		if err != nil {
			return nil, err
		}
		exp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(c.metricsEndpoint), otlpmetrichttp.WithHTTPClient(client))
		if err != nil {
			return nil, fmt.Errorf("otlp metric exporter for %s: %w", c.metricsEndpoint, err)
		}
		// The reader exports every minute (OTel's default) and when the stack
		// closes, what was recorded since.
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		flushOnClose(b, "metrics", c.metricsEndpoint, mp.Shutdown)
		opts = append(opts, tracing.WithMeterProvider(mp))
	}
	return tracing.New(opts...), nil
}

// otlpClientFor returns the exporter's client for endpoint (see otlpHTTPClient).
func otlpClientFor(endpoint, key, signal string) (*http.Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", key, endpoint, err)
	}
	c, err := otlpHTTPClient(u, key, signal)
	if err != nil {
		return nil, fmt.Errorf("tracing, %s: %w", key, err)
	}
	return c, nil
}

// flushOnClose makes the stack's Close shut a provider down, which exports what it
// still holds, waiting at most tracingShutdown for a collector that does not
// answer.
func flushOnClose(b *Builder, what, endpoint string, shutdown func(context.Context) error) {
	b.OnClose(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), tracingShutdown)
		defer cancel()
		if err := shutdown(ctx); err != nil {
			return fmt.Errorf("tracing: flush the %s to %s: %w", what, endpoint, err)
		}
		return nil
	})
}
