//go:build unix

// Package otlpenv sets up export over OTLP from the standard OTEL_*
// variables, as the basis command does: an [otelbasis.Observer] recording
// to a TracerProvider and MeterProvider whose batching exporters send to
// the collector the variables name, over http/protobuf or grpc.
//
// It is the one package of the otelbasis module that links the OTLP
// exporters (gRPC among them); a host that passes its own providers to
// [otelbasis.NewObserver] does not import it and links none of them
// (ADR 0018).
package otlpenv

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/otelbasis"
	"github.com/basis-go/basis/subprocess"
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

// Options configures [New]. The zero value is the default.
type Options struct {
	// ServiceName is the resource's service.name unless
	// OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES set it; "" means
	// "basis".
	ServiceName string
	// ServiceVersion is the resource's service.version; "" leaves it out.
	ServiceVersion string
	// Observer configures the observer (what it records beyond the
	// defaults); nil means every default.
	Observer *otelbasis.Options
	// ExportError, when set, is installed as OpenTelemetry's global error
	// handler (otel.SetErrorHandler), where the SDK's batching exporters
	// report a failed export; nil leaves the handler as it is.
	ExportError func(error)
}

// RequestObserver is the method of mcpbind.RequestObserver, which
// [Telemetry.RequestObserver] returns without this package importing
// mcpbind.
type RequestObserver interface {
	StartMCPRequest(ctx context.Context, req contract.MCPRequest) (context.Context, func(error))
}

// Telemetry is OpenTelemetry set up by [New]. Every method of a nil
// *Telemetry does nothing, so a host calls them whether or not the
// environment asked for export.
type Telemetry struct {
	tp  *sdktrace.TracerProvider
	mp  *sdkmetric.MeterProvider
	obs *otelbasis.Observer
	// parent is the trace the environment names with TRACEPARENT and
	// TRACESTATE.
	parent propagation.MapCarrier
}

// New sets up export over OTLP when environ asks for it: an OTLP
// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or its _TRACES_/_METRICS_ form) or
// OTEL_SERVICE_NAME is set, and OTEL_SDK_DISABLED is not true. Otherwise it
// returns nil and no error, having made no provider and started no
// goroutine.
//
// environ decides whether to export, each signal's protocol
// (OTEL_EXPORTER_OTLP_[SIGNAL_]PROTOCOL: http/protobuf, the default, or
// grpc), which signals (OTEL_TRACES_EXPORTER or OTEL_METRICS_EXPORTER
// "none" leaves one out) and the parent trace ([Telemetry.Parent]). The
// exporters read the rest (endpoint, headers, certificates, timeouts,
// compression) and the resource OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES from the process's environment, as the
// OpenTelemetry SDK does: pass os.Environ() unless you mean to narrow it.
//
// The caller must call [Telemetry.Shutdown] to export what is left.
func New(ctx context.Context, environ []string, opts *Options) (*Telemetry, error) {
	if !enabled(environ) {
		return nil, nil
	}
	if opts == nil {
		opts = &Options{}
	}
	name := opts.ServiceName
	if name == "" {
		name = "basis"
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", name)}
	if opts.ServiceVersion != "" {
		attrs = append(attrs, attribute.String("service.version", opts.ServiceVersion))
	}
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("its resource: %w", err)
	}
	t := &Telemetry{parent: propagation.MapCarrier{"traceparent": getenv(environ, "TRACEPARENT"), "tracestate": getenv(environ, "TRACESTATE")}}
	if getenv(environ, "OTEL_TRACES_EXPORTER") != "none" {
		proto, err := protocol(environ, "TRACES")
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
	if getenv(environ, "OTEL_METRICS_EXPORTER") != "none" {
		proto, err := protocol(environ, "METRICS")
		if err != nil {
			return nil, errors.Join(err, t.Shutdown(ctx))
		}
		var exp sdkmetric.Exporter
		if proto == "grpc" {
			exp, err = otlpmetricgrpc.New(ctx)
		} else {
			exp, err = otlpmetrichttp.New(ctx)
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("its metric exporter: %w", err), t.Shutdown(ctx))
		}
		t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
	}
	// The observer records to the providers made here, or to none: a nil
	// provider would mean the global one, which this package never sets.
	switch {
	case t.tp != nil && t.mp != nil:
		t.obs, err = otelbasis.NewObserver(t.tp, t.mp, opts.Observer)
	case t.tp != nil:
		t.obs, err = otelbasis.NewObserver(t.tp, sdkmetric.NewMeterProvider(), opts.Observer)
	case t.mp != nil:
		t.obs, err = otelbasis.NewObserver(sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample())), t.mp, opts.Observer)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, errors.Join(err, t.Shutdown(ctx))
	}
	if opts.ExportError != nil {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(opts.ExportError))
	}
	return t, nil
}

// enabled reports whether environ asks for export: an OTLP endpoint or a
// service name is set, and OTEL_SDK_DISABLED is not true.
func enabled(environ []string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv(environ, "OTEL_SDK_DISABLED")), "true") {
		return false
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_SERVICE_NAME"} {
		if getenv(environ, name) != "" {
			return true
		}
	}
	return false
}

// protocol is the protocol of one signal: OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL,
// else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf (the
// specification's default).
func protocol(environ []string, signal string) (string, error) {
	p := getenv(environ, "OTEL_EXPORTER_OTLP_"+signal+"_PROTOCOL")
	if p == "" {
		p = getenv(environ, "OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch p {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return "grpc", nil
	}
	return "", fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q is not supported; set grpc or http/protobuf", p)
}

func getenv(environ []string, name string) string {
	v, _ := subprocess.LookupEnv(environ, name)
	return v
}

// Observer returns the runtime's observer for runtime.Options.Observer:
// nil (no observer at all, not a nil pointer in an interface) when t is
// nil.
func (t *Telemetry) Observer() runtime.Observer {
	if t == nil || t.obs == nil {
		return nil
	}
	return t.obs
}

// RequestObserver returns the observer of MCP requests for
// mcpbind.ManagerOptions.Observer: nil when t is nil.
func (t *Telemetry) RequestObserver() RequestObserver {
	if t == nil || t.obs == nil {
		return nil
	}
	return t.obs
}

// Parent returns ctx inside the trace the environment given to [New]
// names with TRACEPARENT and TRACESTATE (the carrier an agent that starts
// a program uses), so a call joins the trace of the agent that made it.
// It returns ctx as it is when t is nil or the trace context is not valid.
func (t *Telemetry) Parent(ctx context.Context) context.Context {
	if t == nil {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, t.parent)
}

// Shutdown exports what is left and stops the providers. It returns when
// ctx is done at the latest: give it a deadline, so that a collector that
// does not answer cannot hold the caller's exit.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	if t.tp != nil {
		errs = append(errs, t.tp.Shutdown(ctx))
	}
	if t.mp != nil {
		errs = append(errs, t.mp.Shutdown(ctx))
	}
	return errors.Join(errs...)
}
