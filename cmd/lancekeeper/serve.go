package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/lancekeeper/lancekeeper/coordinator"
)

// Serve is `lancekeeper serve`.
func (commands) Serve() command {
	return command{
		name: "serve",
		usage: "[--addr HOST:PORT] [--root [NAME=]URL]… [--tokens-file FILE] [--batch-window DURATION] [--no-group-commit] [--max-batch N] " +
			"[--max-pending N] [--max-body BYTES] [--read-timeout D] [--write-timeout D] [--idle-timeout D] [--shutdown-timeout D] " +
			"[--allow-unsafe-commit] [--log-format text|json] [--log-level debug|info|warn|error]",
		summary: "Run the commit coordinator: an HTTP/JSON service that commits transactions (with group commit) for datasets under the given roots.",
		run:     runServe,
	}
}

// rootFlags collects repeated --root values.
type rootFlags []string

func (r *rootFlags) String() string     { return strings.Join(*r, ",") }
func (r *rootFlags) Set(v string) error { *r = append(*r, v); return nil }

// tokensEnv names the variable holding the coordinator's accepted tokens.
const tokensEnv = "LANCEKEEPER_TOKENS"

func runServe(e *env, args []string) int {
	c := commands{}.Serve()
	fs := newFlagSet(e, c)
	addr := fs.String("addr", "127.0.0.1:8470", "listen address; without tokens it must be a loopback address")
	var roots rootFlags
	fs.Var(&roots, "root", "a root datasets live under: URL or NAME=URL (local directory, file://, s3://, gs://, azblob://, mem://); repeatable, the first is the default (default "+coordinator.DefaultRoot+")")
	tokensFile := fs.String("tokens-file", "", "file of accepted bearer tokens, one per line ('#' comments); also read from $"+tokensEnv+" (comma-separated)")
	window := fs.Duration("batch-window", coordinator.DefaultBatchWindow, "how long the first batchable append waits for others to share its version (negative: no waiting)")
	noGroup := fs.Bool("no-group-commit", false, "commit every request alone even when the caller allows batching")
	maxBatch := fs.Int("max-batch", coordinator.DefaultMaxBatch, "most requests merged into one version")
	maxPending := fs.Int("max-pending", coordinator.DefaultMaxPending, "most commit requests queued or running per dataset (beyond: 429 with Retry-After)")
	maxBody := fs.Int64("max-body", coordinator.DefaultMaxBodyBytes, "largest request body in bytes")
	readTO := fs.Duration("read-timeout", coordinator.DefaultReadTimeout, "HTTP read timeout")
	writeTO := fs.Duration("write-timeout", coordinator.DefaultWriteTimeout, "HTTP write timeout (covers waiting for the commit)")
	idleTO := fs.Duration("idle-timeout", coordinator.DefaultIdleTimeout, "HTTP keep-alive idle timeout")
	shutdownTO := fs.Duration("shutdown-timeout", coordinator.DefaultShutdownTimeout, "on SIGINT/SIGTERM, how long accepted commits may take to finish")
	unsafe := fs.Bool("allow-unsafe-commit", false, "serve roots whose store has no atomic create-if-absent (concurrent writers could lose commits)")
	logFormat := fs.String("log-format", "text", "log format on stderr: text or json")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return parseFailed(err)
	}
	if len(pos) != 0 {
		fs.Usage()
		return exitBadInput
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fail(e, c.name, exitBadInput, fmt.Errorf("--log-level %q: want debug, info, warn or error", *logLevel))
	}
	hopts := &slog.HandlerOptions{Level: level}
	var log *slog.Logger
	switch *logFormat {
	case "text":
		log = slog.New(slog.NewTextHandler(e.stderr, hopts))
	case "json":
		log = slog.New(slog.NewJSONHandler(e.stderr, hopts))
	default:
		return fail(e, c.name, exitBadInput, fmt.Errorf("--log-format %q: want text or json", *logFormat))
	}

	cfg := coordinator.Config{
		BatchWindow: *window, DisableGroupCommit: *noGroup, MaxBatch: *maxBatch, MaxPending: *maxPending, MaxBodyBytes: *maxBody,
		ReadTimeout: *readTO, WriteTimeout: *writeTO, IdleTimeout: *idleTO, ShutdownTimeout: *shutdownTO,
		AllowUnsafeCommit: *unsafe, Logger: log,
	}
	cfg.AfterCommit = autoCleanupHook(log)
	if *window == 0 {
		cfg.BatchWindow = -1 // an explicit 0 means "no waiting", not "the default"
	}
	for i, r := range roots {
		root, err := coordinator.ParseRoot(r, i)
		if err != nil {
			return fail(e, c.name, exitBadInput, err)
		}
		cfg.Roots = append(cfg.Roots, root)
	}
	if *tokensFile != "" {
		toks, err := coordinator.LoadTokensFile(*tokensFile, log)
		if err != nil {
			return fail(e, c.name, exitBadInput, err)
		}
		cfg.Tokens = append(cfg.Tokens, toks...)
	}
	if v := os.Getenv(tokensEnv); v != "" {
		toks, err := coordinator.ParseTokens(v)
		if err != nil {
			return fail(e, c.name, exitBadInput, fmt.Errorf("$%s: %w", tokensEnv, err))
		}
		cfg.Tokens = append(cfg.Tokens, toks...)
	}
	if len(cfg.Tokens) == 0 && !coordinator.IsLoopbackAddr(*addr) {
		return fail(e, c.name, exitBadInput, fmt.Errorf("%w: --addr %s; configure tokens (--tokens-file or $%s) or bind a loopback address such as 127.0.0.1:8470",
			coordinator.ErrInsecureListen, *addr, tokensEnv))
	}

	s, err := coordinator.New(e.ctx, cfg)
	if err != nil {
		return fail(e, c.name, exitBadInput, err)
	}
	defer s.Close()
	// e.ctx ends on SIGINT; SIGTERM drains the same way.
	ctx, stop := signal.NotifyContext(e.ctx, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	if err := s.ListenAndServe(ctx, *addr); err != nil {
		if errors.Is(err, coordinator.ErrInsecureListen) {
			return fail(e, c.name, exitBadInput, err)
		}
		return fail(e, c.name, exitFailure, err)
	}
	log.Info("stopped", "uptime", time.Since(start).Round(time.Second).String())
	return exitOK
}
