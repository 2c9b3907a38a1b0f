package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"time"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/otelbasis"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// telemetryFlushLimit bounds the export of what is left at exit: a
// collector that does not answer must not hold the command's exit.
const telemetryFlushLimit = 5 * time.Second

// telemetry is one invocation's OpenTelemetry, set up from the standard
// OTEL_* variables ([startTelemetry]).
type telemetry struct {
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
	obs    *otelbasis.Observer
	stderr io.Writer
}

// telemetryEnabled reports whether the environment asks for export: an
// OTLP endpoint or a service name is set, and OTEL_SDK_DISABLED is not
// true. Without it basis makes no provider and starts no goroutine.
func telemetryEnabled(e *env) bool {
	if strings.EqualFold(strings.TrimSpace(e.getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_SERVICE_NAME"} {
		if e.getenv(name) != "" {
			return true
		}
	}
	return false
}

// otlpProtocol is the protocol of one signal: OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL,
// else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf (the
// specification's default).
func otlpProtocol(e *env, signal string) (string, error) {
	p := e.getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL")
	if p == "" {
		p = e.getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch p {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return "grpc", nil
	}
	return "", fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q is not supported; set grpc or http/protobuf", p)
}

// startTelemetry sets up export over OTLP when the environment asks for
// it ([telemetryEnabled]); nil otherwise. The exporters read the rest of
// their configuration (endpoint, headers, certificates, timeouts) from the
// OTEL_EXPORTER_OTLP_* variables themselves, and the resource from
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; OTEL_TRACES_EXPORTER or
// OTEL_METRICS_EXPORTER "none" leaves that signal out. A problem is
// reported on stderr and nothing is exported: telemetry never stops a
// call.
func startTelemetry(ctx context.Context, e *env) *telemetry {
	if !telemetryEnabled(e) {
		return nil
	}
	t, err := newTelemetry(ctx, e)
	if err != nil {
		fmt.Fprintf(e.stderr, "basis: OpenTelemetry is not exported: %v\n", err)
		return nil
	}
	return t
}

func newTelemetry(ctx context.Context, e *env) (*telemetry, error) {
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "basis"), attribute.String("service.version", moduleVersion())),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("its resource: %w", err)
	}
	t := &telemetry{stderr: e.stderr}
	if e.getenv("OTEL_TRACES_EXPORTER") != "none" {
		proto, err := otlpProtocol(e, "TRACES")
		if err != nil {
			return nil, err
		}
		var exp sdktrace.SpanExporter
		if proto == "grpc" {
			exp, err = otlptracegrpc.New(ctx)
		} else {
			exp, err = otlptracehttp.New(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("its trace exporter: %w", err)
		}
		t.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	}
	if e.getenv("OTEL_METRICS_EXPORTER") != "none" {
		proto, err := otlpProtocol(e, "METRICS")
		if err != nil {
			return nil, errors.Join(err, t.shutdown())
		}
		var exp sdkmetric.Exporter
		if proto == "grpc" {
			exp, err = otlpmetricgrpc.New(ctx)
		} else {
			exp, err = otlpmetrichttp.New(ctx)
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("its metric exporter: %w", err), t.shutdown())
		}
		t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
	}
	// The observer records to the providers made here, or to none: a nil
	// provider would mean the global one, which basis never sets.
	var obs *otelbasis.Observer
	switch {
	case t.tp != nil && t.mp != nil:
		obs, err = otelbasis.NewObserver(t.tp, t.mp, nil)
	case t.tp != nil:
		obs, err = otelbasis.NewObserver(t.tp, sdkmetric.NewMeterProvider(), nil)
	case t.mp != nil:
		obs, err = otelbasis.NewObserver(sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample())), t.mp, nil)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, errors.Join(err, t.shutdown())
	}
	t.obs = obs
	// An export that fails is said once per problem on stderr, in basis's
	// words, rather than through the SDK's default logger.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		fmt.Fprintf(e.stderr, "basis: OpenTelemetry export: %v\n", err)
	}))
	return t, nil
}

// moduleVersion is basis's module version, "(devel)" for a build from a
// checkout.
func moduleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

// observer is the runtime's observer: nil (no observer at all) when t is.
func (t *telemetry) observer() runtime.Observer {
	if t == nil || t.obs == nil {
		return nil
	}
	return t.obs
}

// parent returns ctx inside the trace the environment names with
// TRACEPARENT and TRACESTATE (the carrier an agent that starts basis
// uses), so a call joins the trace of the agent that made it.
func (t *telemetry) parent(ctx context.Context, e *env) context.Context {
	if t == nil {
		return ctx
	}
	carrier := propagation.MapCarrier{"traceparent": e.getenv("TRACEPARENT"), "tracestate": e.getenv("TRACESTATE")}
	return propagation.TraceContext{}.Extract(ctx, carrier)
}

// shutdown exports what is left and stops the providers, within
// telemetryFlushLimit.
func (t *telemetry) shutdown() error {
	if t == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), telemetryFlushLimit)
	defer cancel()
	var errs []error
	if t.tp != nil {
		errs = append(errs, t.tp.Shutdown(ctx))
	}
	if t.mp != nil {
		errs = append(errs, t.mp.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// close shuts t down, reporting a failure on stderr.
func (t *telemetry) close() {
	if t == nil {
		return
	}
	if err := t.shutdown(); err != nil {
		fmt.Fprintf(t.stderr, "basis: OpenTelemetry: exporting at exit failed: %v\n", err)
	}
}
