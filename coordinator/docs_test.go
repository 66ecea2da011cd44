package coordinator

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	coordapi "github.com/lancekeeper/lancekeeper/coordinator/api"
)

// apiConstants returns the string constants of package coordapi whose
// names start with prefix.
func apiConstants(t *testing.T, prefix string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	out := map[string]string{}
	files, err := filepath.Glob("api/*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !strings.HasPrefix(n.Name, prefix) || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						out[n.Name] = v
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s constants found", prefix)
	}
	return out
}

// TestDocsCoverTheAPI: every endpoint path and every error code of the
// wire protocol is in docs/coordinator.md and in the OpenAPI file.
func TestDocsCoverTheAPI(t *testing.T) {
	md, err := os.ReadFile("../docs/coordinator.md")
	if err != nil {
		t.Fatal(err)
	}
	oa, err := os.ReadFile("../docs/coordinator.openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, path := range apiConstants(t, "Path") {
		if !strings.Contains(string(oa), "\n  "+path+":") {
			t.Errorf("%s (%s) is not a path of the OpenAPI file", name, path)
		}
		if !strings.Contains(string(md), path) {
			t.Errorf("%s (%s) is not in docs/coordinator.md", name, path)
		}
	}
	for name, code := range apiConstants(t, "Code") {
		if !strings.Contains(string(oa), code) {
			t.Errorf("%s (%s) is not in the OpenAPI file", name, code)
		}
		if !strings.Contains(string(md), "`"+code+"`") {
			t.Errorf("%s (%s) is not in docs/coordinator.md", name, code)
		}
	}
	for _, m := range []string{"lancekeeper_coordinator_commits_total", "lancekeeper_coordinator_conflicts_total", "lancekeeper_coordinator_commit_retries_total",
		"lancekeeper_coordinator_batch_size", "lancekeeper_coordinator_commit_duration_seconds", "lancekeeper_coordinator_queue_wait_seconds",
		"lancekeeper_coordinator_http_request_duration_seconds", "lancekeeper_coordinator_rejected_requests_total", "lancekeeper_coordinator_batch_fallbacks_total"} {
		if !strings.Contains(string(md), m) {
			t.Errorf("metric %s is not in docs/coordinator.md", m)
		}
	}
}

func TestMethodNotAllowed(t *testing.T) {
	ts := newTestServer(t, Config{})
	code, eb := ts.call(t, http.MethodGet, coordapi.PathCommit, nil, nil)
	wantErr(t, code, eb, http.StatusMethodNotAllowed, coordapi.CodeMethodNotAllowed)
	code, eb = ts.call(t, http.MethodPut, "/v1/datasets/d/tags", nil, nil)
	wantErr(t, code, eb, http.StatusMethodNotAllowed, coordapi.CodeMethodNotAllowed)
}
