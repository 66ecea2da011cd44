package coordinator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/lancekeeper/lancekeeper/commit"
	coordapi "github.com/lancekeeper/lancekeeper/coordinator/api"
	"github.com/lancekeeper/lancekeeper/store"
)

// DefaultRoot is the root used when none is configured: a directory under
// the working directory, so `lancekeeper serve` works without options.
const DefaultRoot = "./lancekeeper-data"

// DefaultRootName names the first root when it is given without a name.
const DefaultRootName = "default"

// Defaults of Config.
const (
	DefaultBatchWindow       = 5 * time.Millisecond
	DefaultMaxBatch          = 256
	DefaultMaxPending        = 256
	DefaultMaxBodyBytes      = 8 << 20
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 60 * time.Second
	DefaultWriteTimeout      = 120 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultShutdownTimeout   = 30 * time.Second
	DefaultRetryAfter        = time.Second
	// MinTokenLen is the shortest bearer token accepted.
	MinTokenLen = 16
)

// ErrInsecureListen is returned by Serve when no token is configured and the
// listener is not on a loopback address.
var ErrInsecureListen = errors.New("refusing to serve without bearer tokens on a non-loopback address")

// ErrBadConfig is wrapped by every configuration error.
var ErrBadConfig = errors.New("invalid coordinator configuration")

// Root is a location datasets live under. A dataset named "a/b" of a root
// whose URL is s3://bucket/lake lives at s3://bucket/lake/a/b.
type Root struct {
	// Name selects the root in requests; "" means DefaultRootName for the
	// first root. Names are unique.
	Name string
	// URL is a local directory or a store URL (see store.Open).
	URL string
	// Store, when set, is used instead of opening URL (the server does not
	// close it). URL is then only reported to clients.
	Store *store.Store
}

// Config configures a Server. The zero value serves DefaultRoot on
// loopback, with group commit.
type Config struct {
	// Roots are the locations datasets live under; the first is the default.
	// Empty means one root, DefaultRoot.
	Roots []Root
	// Tokens are the accepted bearer tokens (each at least MinTokenLen
	// bytes). With none, Serve only accepts loopback listeners.
	Tokens []string

	// BatchWindow is how long the first batchable Append of a group waits
	// for more (0: DefaultBatchWindow; negative: no waiting, batches then
	// form only from requests that queued up behind a running commit).
	BatchWindow time.Duration
	// MaxBatch bounds the requests merged into one version (0: DefaultMaxBatch).
	MaxBatch int
	// DisableGroupCommit commits every request alone, even when the
	// caller allows batching.
	DisableGroupCommit bool
	// MaxPending bounds the commit requests queued or running per dataset
	// (0: DefaultMaxPending); beyond it requests get 429 with Retry-After.
	MaxPending int
	// MaxBodyBytes bounds request bodies (0: DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// HTTP server timeouts (0: the defaults above).
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// ShutdownTimeout bounds the drain after the serving context ends (0:
	// DefaultShutdownTimeout); commits still running then are cancelled.
	ShutdownTimeout time.Duration
	// RetryAfter is the Retry-After of 429 and 503 answers (0: 1s).
	RetryAfter time.Duration

	// MaxRetries bounds the commit engine's attempts per commit (0: the
	// engine's default).
	MaxRetries int
	// AllowUnsafeCommit serves roots whose store has no atomic
	// create-if-absent (two writers could then both "win" a version).
	AllowUnsafeCommit bool

	// Logger receives structured logs (nil: slog.Default()).
	Logger *slog.Logger

	// AfterCommit, when set, runs after each successful commit (one call
	// per version, a group commit included) in the dataset's worker, once
	// the requests are answered: st is the dataset's store, res the
	// commit. It is where Lance's automatic cleanup goes (the table config's
	// lance.auto_cleanup.*): cmd/lancekeeper serve sets it to
	// maint.AfterCommit, which this package (layer 6) cannot import. It
	// never changes a commit's answer; it logs its own errors.
	AfterCommit func(ctx context.Context, st *store.Store, res *commit.Result)

	// beforeCommit is a test hook called by the dataset worker before each
	// commit of n requests.
	beforeCommit func(ctx context.Context, n int)
	// wrapStore is a test hook that wraps the store commits go through.
	wrapStore func(commit.Store) commit.Store
}

func (c Config) withDefaults() Config {
	if len(c.Roots) == 0 {
		c.Roots = []Root{{Name: DefaultRootName, URL: DefaultRoot}}
	}
	if c.BatchWindow == 0 {
		c.BatchWindow = DefaultBatchWindow
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.MaxPending <= 0 {
		c.MaxPending = DefaultMaxPending
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&c.ReadTimeout, DefaultReadTimeout)
	def(&c.WriteTimeout, DefaultWriteTimeout)
	def(&c.IdleTimeout, DefaultIdleTimeout)
	def(&c.ShutdownTimeout, DefaultShutdownTimeout)
	def(&c.RetryAfter, DefaultRetryAfter)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// ParseRoot parses a --root value: "URL" or "NAME=URL". A bare URL gets
// the name DefaultRootName when it is the first root (index 0), else
// "rootN".
func ParseRoot(s string, index int) (Root, error) {
	name, url := "", s
	if i := strings.IndexByte(s, '='); i > 0 && !strings.Contains(s[:i], "/") && !strings.Contains(s[:i], ":") {
		name, url = s[:i], s[i+1:]
	}
	if name == "" {
		name = DefaultRootName
		if index > 0 {
			name = fmt.Sprintf("root%d", index+1)
		}
	}
	if err := coordapi.ValidateRootName(name); err != nil {
		return Root{}, fmt.Errorf("%w: --root %q: %v", ErrBadConfig, s, err)
	}
	if url == "" {
		return Root{}, fmt.Errorf("%w: --root %q: empty URL", ErrBadConfig, s)
	}
	return Root{Name: name, URL: url}, nil
}

// ParseTokens splits a token list (the LANCEKEEPER_TOKENS variable, or a
// tokens file): tokens are separated by commas, spaces or newlines; lines
// starting with '#' are comments.
func ParseTokens(s string) ([]string, error) {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, t := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' }) {
			if len(t) < MinTokenLen {
				return nil, fmt.Errorf("%w: a bearer token of %d bytes is shorter than %d", ErrBadConfig, len(t), MinTokenLen)
			}
			for i := 0; i < len(t); i++ {
				if t[i] <= 0x20 || t[i] >= 0x7f {
					return nil, fmt.Errorf("%w: a bearer token contains byte %#02x (tokens are printable ASCII)", ErrBadConfig, t[i])
				}
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// LoadTokensFile reads a tokens file (see ParseTokens). It warns through
// log when the file is readable by group or others.
func LoadTokensFile(path string, log *slog.Logger) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: tokens file: %v", ErrBadConfig, err)
	}
	if fi.Mode().Perm()&0o077 != 0 && log != nil {
		log.Warn("tokens file is readable by group or others; chmod 600 it", "path", path, "mode", fi.Mode().Perm().String())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: tokens file: %v", ErrBadConfig, err)
	}
	toks, err := ParseTokens(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("%w: tokens file %s holds no token", ErrBadConfig, path)
	}
	return toks, nil
}

// IsLoopbackAddr reports whether a listen address ("host:port") binds only
// loopback interfaces. An empty host, 0.0.0.0 and :: bind every interface.
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
