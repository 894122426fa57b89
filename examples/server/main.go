// Command server is a translation service over HTTP: the unified translation API of seed 000
// §2.1 in JSON, served by a translate.Client. Copy it into your app and replace the engines.
//
//	go run .                          # from examples/server: 127.0.0.1:8080, simulated engines
//	go run . -addr 127.0.0.1:9090 -budget 50
//	go run . -config config.example.json   # engines and policies from a file, followed as it changes
//
//	curl -s 127.0.0.1:8080/v1/translate -H 'Content-Type: application/json' \
//	  -d '{"text":"It rains cats and dogs.","source_lang":"en","target_lang":"zh"}'
//
// Endpoints: POST /v1/translate, POST /v1/translate/batch, GET /v1/engines, GET /healthz,
// GET /readyz and GET /metrics (Prometheus text format, from OpenTelemetry's exporter). The
// README beside this file has the request and response bodies and the table of error codes.
//
// With no vendor settings in the environment it runs on simulated engines and says so when it
// starts. Set DEEPL_AUTH_KEY, GOOGLE_API_KEY, OPENAI_API_KEY + OPENAI_MODEL [+
// OPENAI_BASE_URL], LIBRETRANSLATE_URL or APERTIUM_URL to serve real engines instead.
//
// On SIGTERM or SIGINT it first reports not ready (/readyz answers 503) for -drain (10s by
// default) while it still accepts and serves requests, so that a load balancer polling /readyz
// stops sending new ones; then it stops accepting connections, lets the requests in flight
// finish (at most -shutdown-timeout) and exits 0. A second signal cuts the drain short.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/all"
)

// settings are the server's flags.
type settings struct {
	addr            string
	timeout         time.Duration // per HTTP request
	deadline        time.Duration // translate.WithDeadline
	maxBody         int64
	maxBatch        int
	budget          float64
	shutdownTimeout time.Duration
	drain           time.Duration // how long /readyz answers 503 before the listener closes
	simLatency      time.Duration // added to every simulated engine's latency
	config          string        // configuration file; "" means flags and the environment
}

// maxDrain caps -drain.
const maxDrain = 10 * time.Minute

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func parseFlags(args []string, stderr io.Writer) (settings, error) {
	var s settings
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&s.addr, "addr", "127.0.0.1:8080", "listen address (host:port); port 0 picks a free one")
	fs.DurationVar(&s.timeout, "timeout", 10*time.Second, "longest time one HTTP request may take, batches included")
	fs.DurationVar(&s.deadline, "deadline", 8*time.Second, "deadline of one translation, retries and failover included")
	fs.Int64Var(&s.maxBody, "max-body", 1<<20, "largest request body in bytes")
	fs.IntVar(&s.maxBatch, "max-batch", 100, "most items in one batch request")
	fs.Float64Var(&s.budget, "budget", 0, "daily budget in credits (USD for the bundled profiles); 0 means unlimited")
	fs.DurationVar(&s.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long requests in flight may take to finish on SIGTERM")
	fs.DurationVar(&s.drain, "drain", 10*time.Second, "how long /readyz answers 503 after SIGTERM, requests still served, before the listener closes (0 to 10m)")
	fs.StringVar(&s.config, "config", "", "configuration file (translate.LoadConfig format), watched for changes; replaces the engines, -deadline and -budget")
	fs.DurationVar(&s.simLatency, "sim-latency", 0, "extra latency of every simulated engine (to watch timeouts and graceful shutdown)")
	if err := fs.Parse(args); err != nil {
		return s, err
	}
	switch {
	case fs.NArg() > 0:
		return s, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case s.timeout <= 0, s.deadline <= 0, s.shutdownTimeout <= 0, s.simLatency < 0:
		return s, errors.New("-timeout, -deadline and -shutdown-timeout must be positive, -sim-latency not negative")
	case s.drain < 0 || s.drain > maxDrain:
		return s, fmt.Errorf("-drain must be between 0 and %v", maxDrain)
	case s.maxBody < 64:
		return s, errors.New("-max-body must be at least 64 bytes")
	case s.maxBatch < 1:
		return s, errors.New("-max-batch must be at least 1")
	case s.budget < 0:
		return s, errors.New("-budget must not be negative")
	}
	return s, nil
}

// run serves until ctx is canceled or a SIGTERM/SIGINT arrives, and returns the exit code:
// 0 after a clean shutdown, 1 when the server could not start, 2 on bad flags.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	s, err := parseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "server:", err)
		}
		return 2
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))

	tel, err := newTelemetry()
	if err != nil {
		return exit(stderr, err, 1)
	}
	engines, err := chooseEngines(s, getenv, log)
	if err != nil {
		return exit(stderr, err, 2)
	}
	opts := []translate.Option{translate.WithLogger(log), translate.WithMeterProvider(tel.provider)}
	client, err := translate.New(append(opts, engines.opts...)...)
	if err != nil {
		return exit(stderr, err, 1)
	}
	defer client.Close()
	defer watchConfig(client, s.config)()
	if err := tel.observeClient(client); err != nil {
		return exit(stderr, err, 1)
	}
	defer tel.close()

	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return exit(stderr, err, 1)
	}
	api := newAPI(client, s, tel)
	srv := newHTTPServer(log, tel, api, s)

	// Signals are caught before the banner: a SIGTERM sent as soon as it is printed drains.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	defer signal.Stop(sig)
	banner(stdout, ln.Addr(), engines, s.config != "")

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err := <-served:
		return exit(stderr, err, 1)
	case <-sig:
	case <-ctx.Done():
	}
	return stop(srv, served, api, log, s, sig)
}

// exit reports err on stderr and returns code.
func exit(stderr io.Writer, err error, code int) int {
	fmt.Fprintln(stderr, "server:", err)
	return code
}

// engineSet is what the server serves: the Client options naming the engines, their names
// for the banner, and whether any is simulated.
type engineSet struct {
	opts      []translate.Option
	names     []string
	simulated bool
}

// chooseEngines returns the engines of the configuration file when -config names one, or
// else those of the environment, with -deadline and -budget.
func chooseEngines(s settings, getenv func(string) string, log *slog.Logger) (engineSet, error) {
	if s.config != "" {
		return configEngines(s.config)
	}
	return envEngines(s, getenv, log), nil
}

// configEngines loads the configuration file at path. The file names its engines by type:
// "simulated" is registered here, the bundled adapters ("deepl", "openai", "fake", ...) by
// engines/all.
func configEngines(path string) (engineSet, error) {
	registerSimulated()
	all.Register()
	cfg, err := translate.LoadConfig(path)
	if err != nil {
		return engineSet{}, err
	}
	set := engineSet{opts: []translate.Option{translate.WithConfig(cfg)}}
	for _, e := range cfg.Engines {
		set.names = append(set.names, e.Name)
		set.simulated = set.simulated || e.Type == simulatedType
	}
	return set, nil
}

// envEngines builds the engines the environment's vendor settings call for, or simulated
// ones when there are none; settings it cannot use are logged and skipped.
func envEngines(s settings, getenv func(string) string, log *slog.Logger) engineSet {
	engines, simulated, warnings := buildEngines(getenv, s.simLatency)
	for _, w := range warnings {
		log.Warn("engine skipped", "why", w)
	}
	set := engineSet{simulated: simulated, opts: []translate.Option{
		translate.WithDeadline(s.deadline), translate.WithBudget(translate.Budget{Daily: s.budget})}}
	for _, e := range engines {
		set.opts = append(set.opts, translate.WithEngine(e.engine, e.profile))
		set.names = append(set.names, e.engine.Name())
	}
	return set
}

// watchConfig follows the configuration file at path, if any: changes apply within 2s; a
// bad change is logged and the running configuration kept. The returned stop ends the
// watch and waits for it.
func watchConfig(client *translate.Client, path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		translate.WatchConfig(ctx, client, path)
	}()
	return func() { cancel(); <-watched }
}

// newHTTPServer returns the HTTP server of the API, with its access log and timeouts.
func newHTTPServer(log *slog.Logger, tel *telemetry, a *api, s settings) *http.Server {
	return &http.Server{
		Handler:           accessLog(log, tel, a.routes()),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       s.timeout,
		WriteTimeout:      s.timeout + 5*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// banner says where the server listens and which engines it serves, warning when some are
// simulated.
func banner(stdout io.Writer, addr net.Addr, engines engineSet, configured bool) {
	fmt.Fprintf(stdout, "translate server listening on http://%s\n", addr)
	switch {
	case engines.simulated && !configured:
		fmt.Fprintf(stdout, "no vendor keys in the environment: serving SIMULATED engines %v (answers are not real translations)\n", engines.names)
	case engines.simulated:
		fmt.Fprintf(stdout, "engines: %v; SIMULATED ones among them (type %q) give no real translations\n", engines.names, simulatedType)
	default:
		fmt.Fprintf(stdout, "engines: %v\n", engines.names)
	}
}

// stop drains, then shuts down. For s.drain /readyz answers 503 while the listener stays
// open and requests are still served, so that a load balancer polling /readyz takes the
// server out before it refuses connections; a second signal ends the drain early. Then
// Shutdown closes the listener and waits for the requests in flight (at most
// s.shutdownTimeout). It returns the exit code.
func stop(srv *http.Server, served chan error, a *api, log *slog.Logger, s settings, sig <-chan os.Signal) int {
	a.draining.Store(true)
	log.Info("draining: /readyz answers 503, requests still served", "drain", s.drain.String())
	drained := time.NewTimer(s.drain)
	defer drained.Stop()
	select {
	case <-drained.C:
	case <-sig:
		log.Info("second signal: drain cut short")
	case err := <-served:
		log.Error("serve", "err", err)
		return 1
	}
	log.Info("shutting down: finishing requests in flight", "timeout", s.shutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), s.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Error("shutdown", "err", err)
		return 1
	}
	<-served // http.ErrServerClosed
	log.Info("stopped")
	return 0
}
