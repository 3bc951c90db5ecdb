package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/toolwire/toolwire/internal/tracing"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The OpenTelemetry variables that turn tracing on (the others —
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER[_ARG],
// OTEL_EXPORTER_OTLP_HEADERS, …_TIMEOUT, OTEL_BSP_* — are read by the
// OpenTelemetry SDK itself once it is on).
const (
	envTracesExporter = "OTEL_TRACES_EXPORTER"
	envSDKDisabled    = "OTEL_SDK_DISABLED"
	envOTLPEndpoint   = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envOTLPProtocol   = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
)

// tracingShutdown bounds the flush of the spans still buffered at exit.
const tracingShutdown = 5 * time.Second

// startTracing builds the process's TracerProvider from the OTEL_*
// variables. Tracing is off (a nil provider) unless OTEL_TRACES_EXPORTER
// is otlp or console, or, with it unset, an OTLP endpoint is set;
// OTEL_TRACES_EXPORTER=none and OTEL_SDK_DISABLED=true keep it off. stop
// flushes what is buffered and shuts the exporter down.
func startTracing(ctx context.Context, log *slog.Logger) (tp trace.TracerProvider, stop func(), err error) {
	kind, err := tracesExporter()
	if err != nil || kind == "none" {
		return nil, func() {}, err
	}
	var exp sdktrace.SpanExporter
	switch kind {
	case "console":
		exp, err = stdouttrace.New(stdouttrace.WithWriter(os.Stdout))
	case "otlp":
		if err = checkProtocol(); err == nil {
			// Endpoint, headers, timeout, TLS: the OTEL_EXPORTER_OTLP_*
			// variables, read by the exporter.
			exp, err = otlptracehttp.New(ctx)
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: %w", err)
	}
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override the default name.
	res, err := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", "toolwire")), resource.WithFromEnv())
	switch {
	case errors.Is(err, resource.ErrPartialResource):
		// A malformed OTEL_RESOURCE_ATTRIBUTES entry is left out and the
		// rest kept: a label is no reason to stop serving.
		log.Warn("tracing: resource attributes left out", "err", err)
	case err != nil:
		return nil, nil, fmt.Errorf("tracing: resource: %w", err)
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("tracing", "err", err) }))
	sdk := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res),
		// A turn whose producer sent no trace context is one trace.
		sdktrace.WithIDGenerator(tracing.TurnIDs{}))
	log.Info("tracing on", "exporter", kind)
	return sdk, func() {
		ctx, cancel := context.WithTimeout(context.Background(), tracingShutdown)
		defer cancel()
		if err := sdk.Shutdown(ctx); err != nil {
			log.Warn("tracing: flushing the last spans", "err", err)
		}
	}, nil
}

// tracesExporter is the exporter the environment asks for: none, otlp or
// console.
func tracesExporter() (string, error) {
	if strings.EqualFold(strings.TrimSpace(os.Getenv(envSDKDisabled)), "true") {
		return "none", nil
	}
	v := strings.ToLower(strings.TrimSpace(os.Getenv(envTracesExporter)))
	switch v {
	case "":
		if os.Getenv(envOTLPEndpoint) != "" || os.Getenv(envTracesEndpoint) != "" {
			return "otlp", nil
		}
		return "none", nil
	case "none", "otlp", "console":
		return v, nil
	}
	return "", fmt.Errorf("%s=%q: want none, otlp or console", envTracesExporter, v)
}

// checkProtocol refuses an OTLP protocol other than http/protobuf, the
// one this build exports with.
func checkProtocol() error {
	name, v := envTracesProtocol, os.Getenv(envTracesProtocol)
	if v == "" {
		name, v = envOTLPProtocol, os.Getenv(envOTLPProtocol)
	}
	if v == "" || v == "http/protobuf" {
		return nil
	}
	return fmt.Errorf("%s=%q: only http/protobuf is supported (point the endpoint at the collector's OTLP/HTTP port, 4318)", name, v)
}
