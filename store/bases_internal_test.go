package store

import (
	"context"
	"net/url"
	"testing"
)

// TestBaseURL: a base path on the dataset's scheme and host gets the
// dataset URL's connection parameters ("prefix" excepted); anything else is
// opened as recorded (§3.2 base_paths carry no connection options).
func TestBaseURL(t *testing.T) {
	tests := []struct{ ds, base, want string }{
		{"/tmp/x", "/tmp/y", "/tmp/y"},
		{"s3://b/ds?endpoint=http%3A%2F%2Fh%3A1&region=r", "s3://b/other", "s3://b/other?endpoint=http%3A%2F%2Fh%3A1&region=r"},
		{"s3://b/ds?endpoint=e", "s3://c/other", "s3://c/other"},
		{"s3://b/ds?prefix=p&region=r", "s3://b/other", "s3://b/other?region=r"},
		{"s3://b/ds?region=r", "s3://b/other?region=q", "s3://b/other?region=q"},
		{"s3://b/ds?region=r", "/local/path", "/local/path"},
		{"s3://b/ds", "s3://b/other", "s3://b/other"},
		{"/tmp/x", "s3://b/other", "s3://b/other"},
		{"mem://x", "s3://b/other", "s3://b/other"},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.ds)
		if err != nil {
			t.Fatal(err)
		}
		s := &Store{}
		if u.Scheme == "s3" {
			q := u.Query()
			q.Del("prefix")
			withConn(s, u, q)
		}
		if got := s.BaseURL(tt.base); got != tt.want {
			t.Errorf("BaseURL(%q, %q) = %q, want %q", tt.ds, tt.base, got, tt.want)
		}
	}
}

// TestBaseURL_SubStoresKeepConnection: a branch store (Sub) opens bases
// with the options of the store it was cut from.
func TestBaseURL_SubStoresKeepConnection(t *testing.T) {
	st, err := Open(context.Background(), "s3://b/ds?region=r&endpoint=http%3A%2F%2F127.0.0.1%3A1&use_path_style=true")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sub, err := st.Sub("tree/dev")
	if err != nil {
		t.Fatal(err)
	}
	want := "s3://b/src?endpoint=http%3A%2F%2F127.0.0.1%3A1&region=r&use_path_style=true"
	if got := sub.BaseURL("s3://b/src"); got != want {
		t.Fatalf("BaseURL = %q, want %q", got, want)
	}
}
