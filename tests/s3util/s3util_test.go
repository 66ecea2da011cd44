package s3util

import (
	"net/http"
	"os"
	"strings"
	"testing"
)

// The Go helper and the build script must agree on the pinned version.
func TestWeedVersionMatchesBuildScript(t *testing.T) {
	b, err := os.ReadFile("../s3/seaweed.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `version="${LANCEKEEPER_WEED_VERSION:-`+WeedVersion+`}"`) {
		t.Fatalf("tests/s3/seaweed.sh does not pin %s", WeedVersion)
	}
}

func TestStartServesS3OnLoopbackAndStops(t *testing.T) {
	s := Start(t, "lk-s3util")
	if !strings.HasPrefix(s.Endpoint, "http://127.0.0.1:") {
		t.Fatalf("endpoint %s is not loopback", s.Endpoint)
	}
	resp, err := http.Get(s.Endpoint + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := s.URL("a/b"); !strings.HasPrefix(got, "s3://lk-s3util/a/b?") || !strings.Contains(got, "use_path_style=true") {
		t.Fatalf("URL = %s", got)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(s.Endpoint + "/"); err == nil {
		t.Fatal("server still answers after Stop")
	}
}
