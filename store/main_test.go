package store_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/s3util"
)

// One SeaweedFS server serves every S3 test of the package; it is started by
// the first S3 test and stopped by TestMain.
var shared struct {
	once sync.Once
	srv  *s3util.Server
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		_ = shared.srv.Stop()
		_ = os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// s3URL returns a fresh prefix on the shared server (skipping or failing
// the test when the weed binary is missing, see s3util.Require).
func s3URL(t *testing.T) string {
	t.Helper()
	bin := s3util.Require(t)
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "lancekeeper-store-s3-")
		if shared.err != nil {
			return
		}
		shared.srv, shared.err = s3util.StartBinary(bin, shared.dir, "lancekeeper-store")
		if shared.err != nil {
			return
		}
		for _, kv := range shared.srv.Env() {
			k, v, _ := strings.Cut(kv, "=")
			os.Setenv(k, v)
		}
	})
	if shared.err != nil {
		t.Fatalf("starting SeaweedFS: %v", shared.err)
	}
	return shared.srv.URL("t/" + uuid.NewString())
}

type backend struct {
	name string
	url  func(t *testing.T) string
}

// backends: every backend the suite runs against.
func backends() []backend {
	return []backend{
		{"local", func(t *testing.T) string { return t.TempDir() }},
		{"local-file-url-missing-dir", func(t *testing.T) string { return "file://" + t.TempDir() + "/not/yet" }},
		{"mem", func(t *testing.T) string { return "mem://test/" + uuid.NewString() }},
		{"s3-seaweedfs", s3URL},
	}
}

func openStore(t *testing.T, url string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("Open(%q): %v", url, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
