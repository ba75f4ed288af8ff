package stack

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/tracing"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

func init() {
	RegisterMiddlewareKind(MiddlewareKind{
		Name:    "tracing",
		Summary: "an OpenTelemetry span per call (otlp_endpoint = URL, or the application's providers; content = true records arguments and results, redacted)",
		Rank:    5,
		Decode:  decodeTracing,
	})
}

var _ MiddlewareConfig = (*tracingConfig)(nil)

// tracingShutdown bounds the flush of the spans when the stack closes.
const tracingShutdown = 5 * time.Second

type tracingConfig struct {
	endpoint string
	service  string
	opts     []tracing.Option
}

// decodeTracing reads [middleware.tracing]:
//
//	otlp_endpoint = "http://localhost:4318/v1/traces"  # OTLP/HTTP; "" : the global providers
//	service_name = "mcs"                               # the service.name of the spans
//	content = false                                    # record arguments and results (redacted)
//	content_limit = 4096                               # bytes per content attribute
func decodeTracing(t *Table) MiddlewareConfig {
	c := &tracingConfig{endpoint: t.String("otlp_endpoint"), service: t.String("service_name")}
	if c.endpoint != "" {
		u, err := url.Parse(c.endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Errorf("otlp_endpoint", "%q is not an http or https URL; use one such as \"http://localhost:4318/v1/traces\"", c.endpoint)
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
	if c.endpoint == "" {
		return tracing.New(c.opts...), nil
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(c.endpoint))
	if err != nil {
		return nil, fmt.Errorf("otlp exporter for %s: %w", c.endpoint, err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(c.service))))
	// Close flushes the spans still in the batch, waiting at most
	// tracingShutdown for a collector that does not answer.
	b.OnClose(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), tracingShutdown)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			return fmt.Errorf("tracing: flush the spans to %s: %w", c.endpoint, err)
		}
		return nil
	})
	return tracing.New(append(c.opts, tracing.WithTracerProvider(tp))...), nil
}
