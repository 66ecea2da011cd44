// Package peerlance runs the node peer driver (tests/peer/peer.mjs), which
// drives real Lance 12 through @lancedb/lancedb 0.39.0, and decodes its JSON.
//
// Tests get a Peer with ForTest, which skips loudly when node is absent (and
// fails instead when LANCEKEEPER_REQUIRE_PEER=1, as in CI) and fails when node
// is present but the pinned packages are not installed (run
// tests/peer/install.sh). Lance's refusals come back as *LanceError carrying
// Lance's exact message; anything else that goes wrong is a *DriverError.
//
// The package also writes Arrow IPC files for the driver (WriteIPCFile),
// renders Arrow values in the driver's JSON encoding (ValueJSON), and builds
// seeded random datasets with Lance (MakeRandomDataset).
package peerlance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Environment variables understood by Find and ForTest.
const (
	// EnvNode names the node binary to use (default: node on PATH).
	EnvNode = "LANCEKEEPER_NODE"
	// EnvModules names the node_modules directory holding the pinned packages.
	EnvModules = "LANCEKEEPER_PEER_MODULES"
	// EnvCache is the install cache root used by tests/peer/install.sh
	// (default $HOME/.cache/lancekeeper-peer).
	EnvCache = "LANCEKEEPER_PEER_CACHE"
	// EnvRequire, when "1", turns a missing node into a test failure.
	EnvRequire = "LANCEKEEPER_REQUIRE_PEER"
)

// Exit codes of peer.mjs.
const (
	exitDriver = 1
	exitUsage  = 2
	exitLance  = 3
)

var (
	// ErrNodeMissing reports that no node binary was found.
	ErrNodeMissing = errors.New("peerlance: node is not installed (the Lance 12 peer cannot run)")
	// ErrNotInstalled reports that node exists but the pinned packages do not.
	ErrNotInstalled = errors.New("peer not installed: run tests/peer/install.sh")
	// ErrNoRepo reports that tests/peer/peer.mjs could not be located.
	ErrNoRepo = errors.New("peerlance: cannot find tests/peer/peer.mjs (not inside the lancekeeper repository?)")
)

// Peer runs peer.mjs with a given node and module directory. A Peer returned
// by Serve sends its commands to one long-lived driver process instead of
// starting node for each; it must be closed.
type Peer struct {
	Node    string // node binary
	Driver  string // absolute path of tests/peer/peer.mjs
	Modules string // node_modules directory with @lancedb/lancedb and apache-arrow

	sess *session
}

// LanceError is Lance's (or lancedb's) refusal, reported by the driver with exit code 3.
type LanceError struct {
	Args    []string // driver arguments
	Op      string   // lancedb call that failed (open, delete, checkout, ...)
	Message string   // Lance's exact message
	Paths   []string // dataset paths the driver used (see Normalized)
	Step    int      // failing step of a script command, -1 otherwise
	Results []json.RawMessage
}

func (e *LanceError) Error() string {
	return fmt.Sprintf("lance refused (%s) in peer %s: %s", e.Op, strings.Join(e.Args, " "), e.Message)
}

// Normalized returns Message with every dataset path the driver used replaced
// by "<dataset>", the convention of the corpus .expect.json files. Lance prints
// local paths without their leading '/', so both spellings are replaced.
func (e *LanceError) Normalized() string {
	return NormalizeMessage(e.Message, e.Paths...)
}

// NormalizeMessage replaces each path (with or without its leading '/') by "<dataset>".
func NormalizeMessage(msg string, paths ...string) string {
	ps := append([]string(nil), paths...)
	// Longest first, so a path is not partly replaced through a prefix of it.
	for i := range ps {
		for j := i + 1; j < len(ps); j++ {
			if len(ps[j]) > len(ps[i]) {
				ps[i], ps[j] = ps[j], ps[i]
			}
		}
	}
	for _, p := range ps {
		if p == "" || p == "/" {
			continue
		}
		msg = strings.ReplaceAll(msg, p, "<dataset>")
		msg = strings.ReplaceAll(msg, strings.TrimPrefix(p, "/"), "<dataset>")
	}
	return msg
}

// DriverError is a failure of the driver itself: bad usage, a driver bug, a
// missing installation, or output that is not the promised JSON.
type DriverError struct {
	Args     []string
	ExitCode int
	Stderr   string
	Err      error
}

func (e *DriverError) Error() string {
	msg := fmt.Sprintf("peer %s: exit %d", strings.Join(e.Args, " "), e.ExitCode)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += "\nstderr:\n" + s
	}
	return msg
}

func (e *DriverError) Unwrap() error { return e.Err }

// RepoRoot returns the lancekeeper repository root: the nearest directory at
// or above the working directory whose go.mod declares the lancekeeper module,
// falling back to this source file's location.
func RepoRoot() (string, error) {
	isRoot := func(dir string) bool {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		return err == nil && bytes.Contains(b, []byte("module github.com/lancekeeper/lancekeeper\n"))
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if isRoot(dir) {
				return dir, nil
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir := filepath.Dir(filepath.Dir(filepath.Dir(file)))
		if isRoot(dir) {
			return dir, nil
		}
	}
	return "", ErrNoRepo
}

// CorpusDir returns the lance-corpus directory: $LANCEKEEPER_CORPUS, else
// ../shared/lance-corpus relative to the repository root.
func CorpusDir() (string, error) {
	if d := os.Getenv("LANCEKEEPER_CORPUS"); d != "" {
		return d, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	d := filepath.Join(filepath.Dir(root), "shared", "lance-corpus")
	if _, err := os.Stat(filepath.Join(d, "README.md")); err != nil {
		return "", fmt.Errorf("peerlance: lance corpus not found at %s: %w", d, err)
	}
	return d, nil
}

// ModulesDir returns where the pinned packages are (or would be) installed:
// $LANCEKEEPER_PEER_MODULES, else the install.sh cache entry for the current
// package-lock.json, else tests/peer/node_modules if that is populated.
func ModulesDir(peerDir string) (string, error) {
	if d := os.Getenv(EnvModules); d != "" {
		return d, nil
	}
	lock, err := os.ReadFile(filepath.Join(peerDir, "package-lock.json"))
	if err != nil {
		return "", fmt.Errorf("peerlance: reading package-lock.json: %w", err)
	}
	sum := sha256.Sum256(lock)
	cache := os.Getenv(EnvCache)
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("peerlance: no %s and no home directory: %w", EnvCache, err)
		}
		cache = filepath.Join(home, ".cache", "lancekeeper-peer")
	}
	cached := filepath.Join(cache, hex.EncodeToString(sum[:])[:16], "node_modules")
	if installed(cached) {
		return cached, nil
	}
	if local := filepath.Join(peerDir, "node_modules"); installed(local) {
		return local, nil
	}
	return cached, nil
}

func installed(modules string) bool {
	st, err := os.Stat(filepath.Join(modules, "@lancedb", "lancedb", "package.json"))
	return err == nil && st.Mode().IsRegular()
}

// Find locates node, peer.mjs and the installed packages. It returns
// ErrNodeMissing when there is no node, ErrNotInstalled (wrapped, with the
// path looked at) when the packages are missing.
func Find() (*Peer, error) {
	node := os.Getenv(EnvNode)
	if node == "" {
		p, err := exec.LookPath("node")
		if err != nil {
			return nil, ErrNodeMissing
		}
		node = p
	} else if _, err := os.Stat(node); err != nil {
		return nil, fmt.Errorf("%w: %s=%s: %v", ErrNodeMissing, EnvNode, node, err)
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	peerDir := filepath.Join(root, "tests", "peer")
	script := filepath.Join(peerDir, "peer.mjs")
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoRepo, err)
	}
	modules, err := ModulesDir(peerDir)
	if err != nil {
		return nil, err
	}
	if !installed(modules) {
		return nil, fmt.Errorf("%w (no @lancedb/lancedb in %s)", ErrNotInstalled, modules)
	}
	return &Peer{Node: node, Driver: script, Modules: modules}, nil
}

// ForTest returns a Peer for t. Without node it skips with a loud message,
// unless LANCEKEEPER_REQUIRE_PEER=1, where it fails. With node but without the
// installed packages (or any other problem) it fails.
func ForTest(t testing.TB) *Peer {
	t.Helper()
	p, err := Find()
	if errors.Is(err, ErrNodeMissing) {
		msg := "\n" + strings.Repeat("!", 78) + "\n" +
			"!!! SKIPPING LANCE 12 PEER TEST: node is not installed, so nothing here was\n" +
			"!!! checked against real Lance. Install node 20+ and run tests/peer/install.sh.\n" +
			strings.Repeat("!", 78)
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s=1 but %v%s", EnvRequire, err, msg)
		}
		t.Skip(msg)
	}
	if err != nil {
		t.Fatalf("Lance 12 peer unavailable: %v", err)
	}
	return p
}

// Run runs `node peer.mjs args...` and returns its stdout (one JSON document).
// A Lance refusal (exit 3) is a *LanceError; every other failure a *DriverError.
func (p *Peer) Run(ctx context.Context, args ...string) ([]byte, error) {
	return p.RunInput(ctx, nil, args...)
}

// RunInput is Run with stdin (for `script` and the `-` file arguments). A
// serving Peer runs commands without stdin in its driver process.
func (p *Peer) RunInput(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	if p.sess != nil && stdin == nil {
		return p.sess.run(ctx, args)
	}
	cmd := exec.CommandContext(ctx, p.Node, append([]string{p.Driver}, args...)...)
	cmd.Env = append(os.Environ(), EnvModules+"="+p.Modules, "NO_COLOR=1")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		out := bytes.TrimSpace(stdout.Bytes())
		if !json.Valid(out) {
			return nil, &DriverError{Args: args, Stderr: stderr.String(), Err: fmt.Errorf("stdout is not one JSON document: %.300q", out)}
		}
		return out, nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, &DriverError{Args: args, ExitCode: -1, Stderr: stderr.String(), Err: ctxErr}
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return nil, &DriverError{Args: args, ExitCode: -1, Stderr: stderr.String(), Err: err}
	}
	return nil, failure(args, ee.ExitCode(), bytes.TrimSpace(stdout.Bytes()), stderr.String(), err)
}

// failure turns a non-zero driver exit into *LanceError or *DriverError.
func failure(args []string, code int, doc []byte, stderr string, err error) error {
	if code == exitLance {
		var le struct {
			Error   string            `json:"error"`
			Op      string            `json:"op"`
			Paths   []string          `json:"paths"`
			Step    *int              `json:"step"`
			Results []json.RawMessage `json:"results"`
		}
		if jerr := json.Unmarshal(doc, &le); jerr != nil {
			return &DriverError{Args: args, ExitCode: code, Stderr: stderr, Err: fmt.Errorf("exit 3 without an error document: %w (stdout %.300q)", jerr, doc)}
		}
		e := &LanceError{Args: args, Op: le.Op, Message: le.Error, Paths: le.Paths, Step: -1, Results: le.Results}
		if le.Step != nil {
			e.Step = *le.Step
		}
		return e
	}
	var cause error
	switch code {
	case exitUsage:
		cause = errors.New("bad command line")
	case exitDriver:
		if strings.Contains(stderr, "peer not installed") {
			cause = ErrNotInstalled
		} else {
			cause = errors.New("driver error")
		}
	default:
		cause = err
	}
	return &DriverError{Args: args, ExitCode: code, Stderr: stderr, Err: cause}
}

// RunJSON runs the driver and unmarshals its output into out.
func (p *Peer) RunJSON(ctx context.Context, out any, args ...string) error {
	b, err := p.Run(ctx, args...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return &DriverError{Args: args, Err: fmt.Errorf("decoding output: %w", err)}
	}
	return nil
}

// Versions reports the versions of the driver's packages and node.
func (p *Peer) Versions(ctx context.Context) (lancedb, arrow, node string, err error) {
	var v struct {
		LanceDB string `json:"lancedb"`
		Arrow   string `json:"apache_arrow"`
		Node    string `json:"node"`
	}
	if err := p.RunJSON(ctx, &v, "version"); err != nil {
		return "", "", "", err
	}
	return v.LanceDB, v.Arrow, v.Node, nil
}

// CopyDir copies the directory tree src to dst (which must not exist), with
// files writable by the owner, e.g. to give Lance a scratch copy of a corpus
// dataset. Symlinks are not followed and are refused.
func CopyDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(target, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		default:
			return fmt.Errorf("peerlance: CopyDir: %s is not a regular file or directory", path)
		}
	})
}
