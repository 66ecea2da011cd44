package store

import (
	"path/filepath"
	"testing"
)

func TestRootPath(t *testing.T) {
	abs, _ := filepath.Abs("x/y")
	tests := []struct{ in, want string }{
		{"/tmp/ds.lance", "/tmp/ds.lance"},
		{"/tmp/ds.lance/", "/tmp/ds.lance"},
		{"x/y", filepath.ToSlash(abs)},
		{"file:///tmp/a/../ds", "/tmp/ds"},
		{"s3://bucket/path/ds.lance?endpoint=http://h:1&region=x", "s3://bucket/path/ds.lance"},
		{"s3://user:pw@bucket/ds/", "s3://bucket/ds"},
		{"gs://b?prefix=p/q", "gs://b/p/q"},
	}
	for _, tt := range tests {
		got, err := RootPath(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("RootPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
