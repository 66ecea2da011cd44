package store

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// RootPath returns a dataset root the way Lance records it in base paths
// (§3.2 field 4): a local path as a plain absolute path (no file://), a URL
// as scheme://host/path without user info, query or trailing '/'.
func RootPath(uri string) (string, error) {
	if !strings.Contains(uri, "://") {
		abs, err := filepath.Abs(uri)
		if err != nil {
			return "", fmt.Errorf("root path of %q: %w", uri, err)
		}
		return filepath.ToSlash(abs), nil
	}
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("root path of %q: %w", uri, err)
	}
	if u.Scheme == "file" {
		return filepath.ToSlash(filepath.Clean(filepath.FromSlash(u.Path))), nil
	}
	p := strings.TrimRight(u.Path, "/")
	if q := u.Query().Get("prefix"); q != "" {
		p = p + "/" + strings.Trim(q, "/")
	}
	return u.Scheme + "://" + u.Host + p, nil
}
