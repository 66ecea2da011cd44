// Package s3util runs a real S3 server (SeaweedFS `weed mini`) on loopback
// for tests. The weed binary is built and cached by tests/s3/seaweed.sh; when
// it is missing, Start skips the test with a loud message, or fails it when
// LANCEKEEPER_REQUIRE_S3=1 (CI).
package s3util

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// WeedVersion is the SeaweedFS module version tests/s3/seaweed.sh builds.
const WeedVersion = "v0.0.0-20261109003541-7506e5f91cd6"

// Environment variables.
const (
	// EnvRequire set to 1 turns the skip for a missing weed binary into a failure.
	EnvRequire = "LANCEKEEPER_REQUIRE_S3"
	// EnvWeed names an explicit weed binary.
	EnvWeed = "LANCEKEEPER_WEED"
	// EnvCacheDir overrides the cache directory (as in seaweed.sh).
	EnvCacheDir = "LANCEKEEPER_CACHE_DIR"
)

// Static credentials the server is started with and the client uses.
const (
	AccessKey = "lancekeeper-test"
	SecretKey = "lancekeeper-test-secret"
	Region    = "us-east-1"
)

// BinaryPath returns where seaweed.sh caches the weed binary.
func BinaryPath() (string, error) {
	if p := os.Getenv(EnvWeed); p != "" {
		return p, nil
	}
	cache := os.Getenv(EnvCacheDir)
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("no home directory for the weed cache: %w", err)
			}
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "lancekeeper")
	}
	return filepath.Join(cache, "weed-"+WeedVersion), nil
}

// Binary returns the weed binary, or an error saying how to build it.
func Binary() (string, error) {
	p, err := BinaryPath()
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("SeaweedFS weed binary %s not available (%v); build it with tests/s3/seaweed.sh (about 4 minutes on 2 cores)", p, err)
	}
	return p, nil
}

// Server is a running `weed mini`.
type Server struct {
	Endpoint string // http://127.0.0.1:port
	Bucket   string
	Dir      string
	cmd      *exec.Cmd
	log      *lockedBuffer
	waitErr  chan error
	stopOnce sync.Once
}

// URL returns the store URL of prefix in the server's bucket.
func (s *Server) URL(prefix string) string {
	q := url.Values{}
	q.Set("endpoint", s.Endpoint)
	q.Set("region", Region)
	q.Set("use_path_style", "true")
	p := strings.Trim(prefix, "/")
	if p != "" {
		p = "/" + p
	}
	return "s3://" + s.Bucket + p + "?" + q.Encode()
}

// Env returns the environment the client needs (static credentials, no
// instance-metadata lookups, no shared config files), as KEY=VALUE.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_SESSION_TOKEN=",
		"AWS_REGION=" + Region,
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE=" + filepath.Join(s.Dir, "no-aws-config"),
		"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(s.Dir, "no-aws-credentials"),
		"AWS_PROFILE=",
	}
}

// Log returns what the server printed so far.
func (s *Server) Log() string { return s.log.String() }

// Require returns the weed binary. When it is not built it skips the test
// with a loud message, or fails it when LANCEKEEPER_REQUIRE_S3=1.
func Require(t testing.TB) string {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s=1 but: %v", EnvRequire, err)
		}
		t.Skipf("\n*** SKIPPING S3 TEST: %v ***\n*** set %s=1 to make this a failure ***", err, EnvRequire)
	}
	return bin
}

// Start starts a server for the test (with the client environment set via
// t.Setenv) and stops it at the end of the test. It skips the test, loudly,
// when the weed binary is not built, unless LANCEKEEPER_REQUIRE_S3=1.
func Start(t testing.TB, bucket string) *Server {
	t.Helper()
	bin := Require(t)
	dir := t.TempDir()
	s, err := StartBinary(bin, dir, bucket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Logf("stopping weed: %v", err)
		}
	})
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return s
}

// freePorts reserves n distinct free loopback TCP ports.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("reserving a loopback port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// readyBanner is printed by weed mini once every component runs and the
// -bucket buckets exist.
const readyBanner = "All enabled components are running"

// StartBinary starts `weed mini` with data in dir, every service on a free
// loopback port (WebDAV, Iceberg, Lance namespace, legacy admin port and
// telemetry off) and waits until the S3 endpoint answers. Bucket names need
// 3 to 63 characters.
func StartBinary(bin, dir, bucket string) (*Server, error) {
	if len(bucket) < 3 || len(bucket) > 63 {
		return nil, fmt.Errorf("s3util: bucket name %q must have 3 to 63 characters", bucket)
	}
	var lastErr error
	for attempt := range 3 { // a reserved port may be taken before weed binds it
		s, err := startOnce(bin, filepath.Join(dir, "weed-"+strconv.Itoa(attempt)), bucket)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func startOnce(bin, dir, bucket string) (*Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p, err := freePorts(10)
	if err != nil {
		return nil, err
	}
	args := []string{"mini",
		"-dir=" + dir, "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-bucket=" + bucket,
		"-master.telemetry=false", "-webdav=false", "-admin.ui=false",
		"-s3.port.iceberg=0", "-s3.port.lance=0", "-admin.port.legacy=0",
		"-master.port=" + strconv.Itoa(p[0]), "-master.port.grpc=" + strconv.Itoa(p[1]),
		"-volume.port=" + strconv.Itoa(p[2]), "-volume.port.grpc=" + strconv.Itoa(p[3]),
		"-filer.port=" + strconv.Itoa(p[4]), "-filer.port.grpc=" + strconv.Itoa(p[5]),
		"-s3.port=" + strconv.Itoa(p[6]), "-s3.port.grpc=" + strconv.Itoa(p[7]),
		"-admin.port=" + strconv.Itoa(p[8]), "-admin.port.grpc=" + strconv.Itoa(p[9]),
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	// weed mini creates the identity for these credentials at startup.
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+AccessKey, "AWS_SECRET_ACCESS_KEY="+SecretKey)
	cmd.SysProcAttr = sysProcAttr()
	log := &lockedBuffer{}
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("s3util: start %s: %w", bin, err)
	}
	s := &Server{Endpoint: "http://127.0.0.1:" + strconv.Itoa(p[6]), Bucket: bucket, Dir: dir, cmd: cmd, log: log, waitErr: make(chan error, 1)}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		signalled := false
		for sc.Scan() {
			log.WriteLine(sc.Text())
			if !signalled && strings.Contains(sc.Text(), readyBanner) {
				signalled = true
				close(ready)
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() {
		err := cmd.Wait()
		pw.Close()
		s.waitErr <- err
	}()
	deadline := time.NewTimer(90 * time.Second)
	defer deadline.Stop()
	select {
	case <-ready:
	case err := <-s.waitErr:
		s.waitErr <- err
		return nil, fmt.Errorf("s3util: weed mini exited before it was ready (%v); log:\n%s", err, log.String())
	case <-deadline.C:
		_ = s.Stop()
		return nil, fmt.Errorf("s3util: weed mini not ready after 90s; log:\n%s", log.String())
	}
	if err := waitHTTP(s.Endpoint, 30*time.Second); err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("s3util: %w; log:\n%s", err, log.String())
	}
	return s, nil
}

func waitHTTP(endpoint string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/", nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("S3 endpoint %s not answering: %v", endpoint, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop terminates the server (SIGTERM, then SIGKILL after 15s) and waits.
func (s *Server) Stop() error {
	var err error
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err = <-s.waitErr:
		case <-time.After(15 * time.Second):
			_ = s.cmd.Process.Kill()
			err = <-s.waitErr
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = nil // terminated by our signal
		}
	})
	return err
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) WriteLine(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < 4<<20 {
		l.b.WriteString(s)
		l.b.WriteByte('\n')
	}
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
