package drivers_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/lancekeeper/lancekeeper/store"
	_ "github.com/lancekeeper/lancekeeper/store/drivers"
)

// deadProxy is a loopback address nothing listens on. Every HTTP client
// that honours the proxy environment (the GCS and Azure SDKs' default
// transports do) sends its requests there, so a test that accidentally
// tried to reach Google or Azure fails with "proxyconnect … refused"
// instead of touching the network.
const deadProxy = "http://127.0.0.1:1"

func TestMain(m *testing.M) {
	if u := os.Getenv(childEnv); u != "" {
		openChild(u)
		os.Exit(0)
	}
	// Set before any HTTP client reads the proxy environment (it is read
	// once per process).
	for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"} {
		os.Setenv(k, deadProxy)
	}
	os.Unsetenv("NO_PROXY")
	os.Unsetenv("no_proxy")
	os.Exit(m.Run())
}

func TestDriversRegisterGSAndAzblob(t *testing.T) {
	mux := blob.DefaultURLMux()
	for _, scheme := range []string{"gs", "azblob", "s3", "file", "mem"} {
		if !mux.ValidBucketScheme(scheme) {
			t.Errorf("scheme %s is not registered", scheme)
		}
	}
}

func notLinked(err error) bool {
	return err != nil && strings.Contains(err.Error(), "not linked")
}

// gs:// opens through gcsblob with Application Default Credentials from
// GOOGLE_APPLICATION_CREDENTIALS. The key file here names a client email
// (so the driver does not probe the GCE metadata server) and a private key
// that is not a key: opening needs no network and succeeds, the first
// request fails while signing its token, before anything is sent.
func TestOpenGCSUsesEnvironmentCredentialsOffline(t *testing.T) {
	key := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(key, []byte(`{
  "type": "service_account",
  "project_id": "lancekeeper-offline",
  "private_key_id": "0",
  "private_key": "not a private key",
  "client_email": "offline@lancekeeper-offline.iam.gserviceaccount.com",
  "client_id": "0",
  "token_uri": "`+deadProxy+`/token"
}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", key)
	t.Setenv("STORAGE_EMULATOR_HOST", "")
	t.Setenv("STORAGE_EMULATOR_HOST_GRPC", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	s, err := store.Open(ctx, "gs://lancekeeper-offline-bucket/datasets")
	if err != nil {
		t.Fatalf("Open gs://: %v", err)
	}
	defer s.Close()
	if s.Kind() != store.KindGCS || !s.AtomicCreate() || s.KeyPrefix() != "datasets/" {
		t.Fatalf("kind %s atomic %v prefix %q", s.Kind(), s.AtomicCreate(), s.KeyPrefix())
	}
	_, err = s.Exists(ctx, "probe")
	if err == nil {
		t.Fatal("a request with an unusable private key succeeded")
	}
	msg := err.Error()
	if strings.Contains(msg, "proxyconnect") || !strings.Contains(msg, "private key") {
		t.Fatalf("want a credentials error raised before any request is sent, got: %v", err)
	}
}

// childEnv is the variable that makes the test binary open one URL and
// report (see TestMain): the azureblob driver reads its environment once
// per process, so each configuration runs in its own process.
const childEnv = "LANCEKEEPER_DRIVERS_TEST_OPEN"

// openChild is the child side: open the URL, report kind and prefix or the
// error on stdout.
func openChild(rawURL string) {
	s, err := store.Open(context.Background(), rawURL)
	if err != nil {
		fmt.Printf("ERR %v\n", err)
		return
	}
	defer s.Close()
	fmt.Printf("OK kind=%s atomic=%v prefix=%s\n", s.Kind(), s.AtomicCreate(), s.KeyPrefix())
}

// runOpenChild re-runs the test binary to open rawURL with env (and every
// AZURE_* variable of the parent removed); it returns the child's report.
func runOpenChild(t *testing.T, rawURL string, env map[string]string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AZURE_") && !strings.HasPrefix(kv, childEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, childEnv+"="+rawURL)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// azblob:// opens through azureblob with the account and key from the
// environment. Opening builds a client and sends nothing; configuration
// and credential errors surface at Open.
func TestOpenAzureUsesEnvironmentCredentialsOffline(t *testing.T) {
	const url = "azblob://lancekeeper-container/datasets"
	cases := []struct {
		name string
		env  map[string]string
		want string // prefix of the child's report
	}{
		{"no account", nil, "ERR store: open " + url + ": azureblob: Options.AccountName is required"},
		{"key not base64", map[string]string{"AZURE_STORAGE_ACCOUNT": "lkoffline", "AZURE_STORAGE_KEY": "not base64!"},
			"ERR store: open " + url + ": failed azblob.NewSharedKeyCredential"},
		{"account name with a dot", map[string]string{"AZURE_STORAGE_ACCOUNT": "lk.offline", "AZURE_STORAGE_KEY": "a2V5"},
			"ERR store: open " + url + `: azureblob: Options.AccountName "lk.offline" contains a non-alphanumeric character`},
		{"account and key", map[string]string{"AZURE_STORAGE_ACCOUNT": "lkoffline",
			"AZURE_STORAGE_KEY": base64.StdEncoding.EncodeToString([]byte("lancekeeper offline test key"))},
			"OK kind=azure atomic=true prefix=datasets/"},
		{"connection string", map[string]string{"AZURE_STORAGE_ACCOUNT": "lkoffline", "AZURE_STORAGE_CONNECTION_STRING": "AccountName=lkoffline;AccountKey=a2V5;EndpointSuffix=core.windows.net"},
			"OK kind=azure atomic=true prefix=datasets/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := runOpenChild(t, url, tc.env)
			if strings.Contains(got, "not linked") || !strings.HasPrefix(got, tc.want) {
				t.Fatalf("child reported %q, want %q…", got, tc.want)
			}
		})
	}
}
