package coordinator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordapi "github.com/lancekeeper/lancekeeper/coordinator/api"
	"github.com/lancekeeper/lancekeeper/store"
)

// TestDatasetNamesThatEscapeTheRoot: every spelling of a name that could
// leave the root is refused, through the URL path and through the commit
// body, before anything is read or written.
func TestDatasetNamesThatEscapeTheRoot(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.createDataset(t, "ok")
	cases := []struct {
		name    string
		rawPath string // the {dataset} segment as sent on the wire ("" = not sendable in a path)
		body    string // the name in a commit body
	}{
		{"dot-dot", "..", ".."},
		{"encoded dot-dot", "%2e%2e", ".."},
		{"encoded upper dot-dot", "%2E%2E", ".."},
		{"double-encoded dot-dot", "%252e%252e", "%2e%2e"},
		{"dot-dot slash", "..%2Fetc", "../etc"},
		{"inner dot-dot", "a%2F..%2Fb", "a/../b"},
		{"trailing dot-dot", "a%2F..", "a/.."},
		{"dot", ".", "."},
		{"segment ending with dot-dot", "a..%2Fb", "a../b"},
		{"absolute path", "%2Fetc%2Fpasswd", "/etc/passwd"},
		{"leading slash", "%2Fok", "/ok"},
		{"trailing slash", "ok%2F", "ok/"},
		{"doubled slash", "a%2F%2Fb", "a//b"},
		{"scheme", "s3:%2F%2Fbucket%2Fx", "s3://bucket/x"},
		{"file scheme", "file:%2F%2F%2Fetc", "file:///etc"},
		{"drive letter", "C:", "C:"},
		{"backslash", "a%5Cb", `a\b`},
		{"backslash dot-dot", "..%5C..%5Cx", `..\..\x`},
		{"NUL", "a%00b", "a\x00b"},
		{"newline", "a%0Ab", "a\nb"},
		{"percent", "a%25b", "a%b"},
		{"hidden", ".git", ".git"},
		{"internal dir", "ok%2F_versions", "ok/_versions"},
		{"empty", "", ""},
		{"space", "a%20b", "a b"},
		{"non-ASCII", "%C3%A9", "é"},
		{"overlong UTF-8 dot", "%C0%AE%C0%AE", "\xc0\xae\xc0\xae"},
		{"too long", strings.Repeat("a", 256), strings.Repeat("a", 256)},
		{"too many segments", strings.Repeat("a%2F", 8) + "a", strings.Repeat("a/", 8) + "a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := coordapi.ValidateDatasetName(c.body); !errors.Is(err, coordapi.ErrInvalidDatasetName) {
				t.Fatalf("ValidateDatasetName(%q) = %v", c.body, err)
			}
			if c.rawPath != "" {
				code, eb := ts.call(t, http.MethodGet, "/v1/datasets/"+c.rawPath+"/versions", nil, nil)
				if code != http.StatusBadRequest && code != http.StatusNotFound {
					t.Fatalf("GET %s: %d", c.rawPath, code)
				}
				if code == http.StatusBadRequest && eb.Code != coordapi.CodeInvalidDatasetName {
					t.Fatalf("GET %s: %+v", c.rawPath, eb)
				}
			}
			_, code, eb := ts.commit(t, coordapi.CommitRequest{Dataset: c.body, ReadVersion: 1,
				Operation: coordapi.Operation{ReserveFragments: &coordapi.ReserveFragmentsOp{Count: 1}}})
			wantErr(t, code, eb, http.StatusBadRequest, coordapi.CodeInvalidDatasetName)
		})
	}
	// Nothing was created outside the dataset directories.
	var outside []string
	_ = filepath.Walk(filepath.Dir(strings.TrimSuffix(ts.Root.String(), "/")), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && !strings.Contains(p, "/root/ok/") {
			outside = append(outside, p)
		}
		return nil
	})
	if len(outside) > 0 {
		t.Fatalf("files outside the dataset: %v", outside)
	}
	// Allowed names still work.
	for _, ok := range []string{"ok", "a/b", "A-1/b_2.lance", "x.y.z"} {
		if err := coordapi.ValidateDatasetName(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	var sum coordapi.DatasetSummary
	ts.ok(t, http.MethodGet, "/v1/datasets/ok", nil, &sum)
}

func TestAuth_BearerTokens(t *testing.T) {
	const tok1, tok2 = "0123456789abcdef-one", "0123456789abcdef-two"
	ts := newTestServer(t, Config{Tokens: []string{tok1, tok2}})
	ts.createDataset(t, "d")
	for _, c := range []struct {
		name, path, auth string
		want             int
	}{
		{"no token", "/v1/datasets/d", "", 401},
		{"wrong token", "/v1/datasets/d", "Bearer 0123456789abcdef-bad", 401},
		{"token prefix", "/v1/datasets/d", "Bearer " + tok1[:10], 401},
		{"basic scheme", "/v1/datasets/d", "Basic " + tok1, 401},
		{"first token", "/v1/datasets/d", "Bearer " + tok1, 200},
		{"second token, lower-case scheme", "/v1/datasets/d", "bearer " + tok2, 200},
		{"metrics need a token", "/metrics", "", 401},
		{"metrics with token", "/metrics", "Bearer " + tok2, 200},
		{"health is open", "/healthz", "", 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, ts.URL+c.path, nil)
			if c.auth != "" {
				req.Header.Set("Authorization", c.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Fatalf("%d, want %d", resp.StatusCode, c.want)
			}
			if c.want == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
		})
	}
	if _, err := New(context.Background(), Config{Tokens: []string{"short"}, Roots: []Root{{URL: t.TempDir()}}, Logger: quietLogger()}); !errors.Is(err, ErrBadConfig) {
		t.Fatalf("short token: %v", err)
	}
}

func TestParseTokens(t *testing.T) {
	toks, err := ParseTokens("# comment\n0123456789abcdef1, 0123456789abcdef2\n\n  0123456789abcdef3 \n")
	if err != nil || len(toks) != 3 || toks[2] != "0123456789abcdef3" {
		t.Fatalf("%v %v", toks, err)
	}
	for _, bad := range []string{"tooshort", "0123456789abcdef\x01x"} {
		if _, err := ParseTokens(bad); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "tokens")
	if err := os.WriteFile(p, []byte("0123456789abcdef1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	toks, err = LoadTokensFile(p, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil || len(toks) != 1 || !strings.Contains(logs.String(), "readable by group or others") {
		t.Fatalf("%v %v %q", toks, err, logs.String())
	}
	if err := os.WriteFile(p, []byte("# none\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTokensFile(p, nil); !errors.Is(err, ErrBadConfig) {
		t.Fatalf("empty tokens file: %v", err)
	}
}

func TestParseRoot(t *testing.T) {
	for _, c := range []struct {
		in        string
		index     int
		name, url string
		bad       bool
	}{
		{"./data", 0, "default", "./data", false},
		{"./data", 1, "root2", "./data", false},
		{"lake=s3://b/p?region=x", 0, "lake", "s3://b/p?region=x", false},
		{"s3://b/p?x=y=z", 0, "default", "s3://b/p?x=y=z", false},
		{"/a=b/c", 0, "default", "/a=b/c", false},
		{"bad name=/x", 0, "", "", true},
		{"x=", 0, "", "", true},
	} {
		r, err := ParseRoot(c.in, c.index)
		if c.bad != (err != nil) || (!c.bad && (r.Name != c.name || r.URL != c.url)) {
			t.Errorf("ParseRoot(%q) = %+v, %v", c.in, r, err)
		}
	}
}

// TestLoopbackOnlyWithoutTokens: without tokens the server binds loopback
// only and refuses any other address (and warns).
func TestLoopbackOnlyWithoutTokens(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:0": true, "localhost:8470": true, "[::1]:0": true, "127.1.2.3:1": true,
		":8470": false, "0.0.0.0:8470": false, "[::]:0": false, "10.0.0.1:80": false, "example.com:80": false, "nonsense": false,
	} {
		if got := IsLoopbackAddr(addr); got != want {
			t.Errorf("IsLoopbackAddr(%q) = %v", addr, got)
		}
	}
	var logs bytes.Buffer
	s, err := New(context.Background(), Config{Roots: []Root{{URL: t.TempDir()}}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, addr := range []string{":0", "0.0.0.0:0"} {
		if err := s.ListenAndServe(context.Background(), addr); !errors.Is(err, ErrInsecureListen) {
			t.Fatalf("ListenAndServe(%q) = %v", addr, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { done <- s.Serve(ctx, ln) }()
	waitHealthy(t, "http://"+ln.Addr().String())
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "no bearer tokens configured") {
		t.Fatalf("no warning logged: %s", logs.String())
	}
}

func waitHealthy(t testing.TB, base string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		resp, err := http.Get(base + coordapi.PathHealth)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never became healthy", base)
}

func TestBodyLimit(t *testing.T) {
	ts := newTestServer(t, Config{MaxBodyBytes: 1024})
	st := ts.createDataset(t, "d")
	var frags = writeFile(t, st, 1)
	req := appendReq(t, "d", 1, false, frags)
	req.Properties = map[string]string{"pad": strings.Repeat("x", 2000)}
	_, code, eb := ts.commit(t, req)
	wantErr(t, code, eb, http.StatusRequestEntityTooLarge, coordapi.CodeBodyTooLarge)
	if got := metricValue(t, ts.Server, "lancekeeper_coordinator_rejected_requests_total", map[string]string{"reason": "body_too_large"}); got != 1 {
		t.Fatalf("rejected metric %v", got)
	}
	_, code, eb = ts.commit(t, appendReq(t, "d", 1, false, frags))
	mustOK(t, code, eb)
}

// TestPerDatasetLimit: beyond MaxPending queued or running commits of one
// dataset, requests get 429 with Retry-After; other datasets are not
// affected.
func TestPerDatasetLimit(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	entered := make(chan struct{})
	ts := newTestServer(t, Config{MaxPending: 2, RetryAfter: 3 * time.Second, beforeCommit: func(ctx context.Context, _ int) {
		if calls.Add(1) == 1 {
			close(entered)
			<-release
		}
	}})
	st := ts.createDataset(t, "d")
	other := ts.createDataset(t, "e")
	results := make(chan answer, 2)
	go func() { results <- ts.post(appendReq(t, "d", 1, false, writeFile(t, st, 1))) }()
	<-entered
	go func() { results <- ts.post(appendReq(t, "d", 1, false, writeFile(t, st, 2))) }()
	for ts.queued(queueKey(DefaultRootName, "d")) < 1 {
		time.Sleep(time.Millisecond)
	}
	data := appendReq(t, "d", 1, false, writeFile(t, st, 3))
	req, _ := http.NewRequest(http.MethodPost, ts.URL+coordapi.PathCommit, bytes.NewReader(mustJSON(t, data)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "3" || !strings.Contains(string(body), coordapi.CodeTooManyRequests) {
		t.Fatalf("%d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	// Another dataset is served meanwhile.
	res, code, eb := ts.commit(t, appendReq(t, "e", 1, false, writeFile(t, other, 1)))
	mustOK(t, code, eb)
	if res.Version != 2 {
		t.Fatalf("%+v", res)
	}
	close(release)
	for i := 0; i < 2; i++ {
		if a := <-results; a.err != nil {
			t.Fatalf("%d %+v", a.status, a.err)
		}
	}
	if got := metricValue(t, ts.Server, "lancekeeper_coordinator_rejected_requests_total", map[string]string{"reason": "queue_full"}); got != 1 {
		t.Fatalf("queue_full metric %v", got)
	}
}

// TestGracefulShutdownDrains: cancelling Serve's context while commits are
// queued and running finishes and answers every one of them; requests
// arriving during the drain get 503 with Retry-After; Serve returns nil.
func TestGracefulShutdownDrains(t *testing.T) {
	const n = 6
	release := make(chan struct{})
	var once sync.Once
	entered := make(chan struct{})
	ts, st, cancel, served := startServing(t, Config{BatchWindow: -1,
		beforeCommit: func(ctx context.Context, _ int) { once.Do(func() { close(entered); <-release }) }})
	s := ts.Server

	answers := make(chan answer, n)
	paths := make([]string, n)
	for i := 0; i < n; i++ {
		f := writeFile(t, st, int64(i))
		paths[i] = f.Files[0].Path
		req := appendReq(t, "d", 1, i%2 == 0, f)
		go func(i int) { a := ts.post(req); a.path = paths[i]; answers <- a }(i)
		if i == 0 {
			<-entered
		}
	}
	for s.queued(queueKey(DefaultRootName, "d")) < n-1 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	for !s.draining.Load() {
		time.Sleep(time.Millisecond)
	}
	// A request during the drain is refused with 503 (sent straight to the
	// handler: the listener closes while the drain goes on).
	rec := &recorder{header: http.Header{}}
	hreq, _ := http.NewRequest(http.MethodPost, coordapi.PathCommit, bytes.NewReader(mustJSON(t, appendReq(t, "d", 1, true, writeFile(t, st, 99)))))
	hreq.Header.Set("Content-Type", "application/json")
	s.Handler().ServeHTTP(rec, hreq)
	if rec.status != http.StatusServiceUnavailable || rec.header.Get("Retry-After") == "" || !strings.Contains(rec.body.String(), coordapi.CodeShuttingDown) {
		t.Fatalf("during drain: %d %v %s", rec.status, rec.header, rec.body.String())
	}
	rec = &recorder{header: http.Header{}}
	hreq, _ = http.NewRequest(http.MethodGet, coordapi.PathHealth, nil)
	s.Handler().ServeHTTP(rec, hreq)
	if rec.status != http.StatusServiceUnavailable || !strings.Contains(rec.body.String(), "draining") {
		t.Fatalf("health during drain: %d %s", rec.status, rec.body.String())
	}
	close(release)
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	var all []answer
	for i := 0; i < n; i++ {
		a := <-answers
		if a.err != nil {
			t.Fatalf("drained request: %d %+v", a.status, a.err)
		}
		all = append(all, a)
	}
	checkAcks(t, ts, "d", all)
}

// TestShutdownTimeoutCancelsCommits: a commit that outlives the drain
// deadline is cancelled and Serve reports the incomplete drain.
func TestShutdownTimeoutCancelsCommits(t *testing.T) {
	entered := make(chan struct{})
	var once sync.Once
	ts, st, cancel, served := startServing(t, Config{ShutdownTimeout: 50 * time.Millisecond,
		beforeCommit: func(ctx context.Context, _ int) {
			once.Do(func() { close(entered) })
			<-ctx.Done()
		}})
	got := make(chan answer, 1)
	go func() { got <- ts.post(appendReq(t, "d", 1, false, writeFile(t, st, 1))) }()
	<-entered
	cancel()
	if err := <-served; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Serve: %v", err)
	}
	if a := <-got; a.err == nil {
		t.Fatalf("cancelled commit acknowledged: %+v", a.res)
	}
	if v := latest(t, st).Manifest.GetVersion(); v != 1 {
		t.Fatalf("version %d after a cancelled commit", v)
	}
}

// startServing starts a coordinator through Serve on a loopback listener
// (not httptest), so that a test can stop it by cancelling Serve's
// context, and creates dataset "d". It returns the server, the dataset's
// store, the cancel function of Serve's context and Serve's result.
func startServing(t *testing.T, cfg Config) (*testServer, *store.Store, context.CancelFunc, <-chan error) {
	t.Helper()
	cfg.Roots = []Root{{URL: t.TempDir() + "/root"}}
	cfg.Logger = quietLogger()
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ts := &testServer{Server: s}
	if ts.Root, err = s.RootStore(""); err != nil {
		t.Fatal(err)
	}
	st := ts.createDataset(t, "d")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.URL = "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	waitHealthy(t, ts.URL)
	return ts, st, cancel, served
}

type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = 200
	}
	return r.body.Write(b)
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTimeouts_SlowClientIsDisconnected: a client that never finishes its
// request headers is cut off after ReadHeaderTimeout.
func TestTimeouts_SlowClientIsDisconnected(t *testing.T) {
	s, err := New(context.Background(), Config{Roots: []Root{{URL: t.TempDir()}}, Logger: quietLogger(), ReadHeaderTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n")); err != nil {
		t.Fatal(err)
	}
	// The server closes the connection; without the timeout this read
	// would block until the deadline below.
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err = io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the server kept a half-sent request open")
	}
}
