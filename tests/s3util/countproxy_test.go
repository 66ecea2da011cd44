package s3util

import (
	"net/http/httptest"
	"testing"
)

// TestRequestKind classifies path-style S3 requests as the counting proxy
// reports them.
func TestRequestKind(t *testing.T) {
	for _, c := range []struct {
		method, target, rng, want string
	}{
		{"GET", "/b/t/_versions/1.manifest", "", KindGet},
		{"GET", "/b/t/data/x.lance", "bytes=0-99", KindGetRange},
		{"GET", "/b?list-type=2&prefix=t%2F_versions%2F", "", KindList},
		{"GET", "/b/", "", KindList},
		{"HEAD", "/b/t/_versions/2.manifest", "", KindHead},
		{"PUT", "/b/t/_versions/2.manifest", "", KindPut},
		{"DELETE", "/b/t/x", "", KindDelete},
		{"POST", "/b/t/x?uploads", "", KindOther},
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		if c.rng != "" {
			r.Header.Set("Range", c.rng)
		}
		if got := RequestKind(r); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.method, c.target, got, c.want)
		}
	}
}
