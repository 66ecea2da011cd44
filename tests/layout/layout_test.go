// Package layout_test checks the architecture docs/architecture.md
// describes: dependencies point down a declared layer table (no package
// imports one above it, or one of its own layer), and no package exports
// more than about 60 names without stating why in its package doc.
package layout_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/lancekeeper/lancekeeper"

// layers is the declared layer of every package of the module (paths
// relative to the module root, "." for the root facade): a package may
// import only packages of a lower layer. A new package gets a row here,
// and one in docs/architecture.md.
var layers = map[string]int{
	// 0: leaves, no lancekeeper imports: generated protobuf, shared
	// mechanisms, the feature-flag table, object storage, the wire protocol.
	"manifest/pb":            0,
	"datafile/internal/pb21": 0,
	"internal/deps":          0,
	"internal/flatbuf":       0,
	"internal/floatorder":    0,
	"internal/arrowconcat":   0,
	"internal/truncate":      0,
	"flags":                  0,
	"store":                  0,
	"store/drivers":          0,
	"coordinator/api":        0,
	// 1: mechanisms built on leaves.
	"internal/arrowipc":       1,
	"datafile/internal/codec": 1,
	// 2: formats: manifests, deletion files, seeds, index payloads.
	"manifest":  2,
	"seedio":    2,
	"indexfile": 2,
	// 3: data files (they carry seeds); predicates (over seedio only).
	"datafile": 3,
	"filter":   3,
	// 4: the commit engine.
	"commit": 4,
	// 5: versions and refs; the coordinator's client.
	"snapshot":           5,
	"coordinator/client": 5,
	"zonemap":            5,
	// 6: what reads a dataset as a whole; the coordinator server.
	"inspect":     6,
	"scan":        6,
	"coordinator": 6,
	// 7: table maintenance (compaction, cleanup, seed backfill, branch
	// deletion) and validation.
	"maint": 7,
	"check": 7,
	// 8: the facade (above maintenance and checks at 7).
	".": 8,
	// 9: the command.
	"cmd/lancekeeper": 9,
}

// harness packages (tests/…) may import anything; nothing may import them.
func isHarness(rel string) bool { return rel == "tests" || strings.HasPrefix(rel, "tests/") }

type listed struct {
	ImportPath string
	Dir        string
	Imports    []string
	GoFiles    []string
	Name       string
}

func goList(t *testing.T) []listed {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = root
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, errb.String())
	}
	var pkgs []listed
	dec := json.NewDecoder(&out)
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func rel(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	if r, ok := strings.CutPrefix(path, module+"/"); ok {
		return r, true
	}
	return "", false
}

// TestLayers_NoPackageImportsOneAboveIt: every import between packages of
// the module goes to a strictly lower layer of the table.
func TestLayers_NoPackageImportsOneAboveIt(t *testing.T) {
	for _, p := range goList(t) {
		from, _ := rel(p.ImportPath)
		if isHarness(from) {
			continue
		}
		lf, ok := layers[from]
		if !ok {
			t.Errorf("package %s has no row in the layer table of tests/layout (and docs/architecture.md)", from)
			continue
		}
		for _, imp := range p.Imports {
			to, ours := rel(imp)
			if !ours {
				continue
			}
			if isHarness(to) {
				t.Errorf("%s imports the test harness %s", from, to)
				continue
			}
			lt, ok := layers[to]
			if !ok {
				continue // reported as its own package above
			}
			if lt >= lf {
				t.Errorf("%s (layer %d) imports %s (layer %d): dependencies must point down", from, lf, to, lt)
			}
		}
	}
}

// maxExported is the exported-name budget of a package (top-level types,
// functions, constants and variables).
const maxExported = 60

// reasonMarker must appear in the package doc of a package over budget,
// followed by the reason.
const reasonMarker = "exports more than 60 names because"

// generated packages are exempt: their names follow the .proto files.
var generated = map[string]bool{"manifest/pb": true, "datafile/internal/pb21": true}

// TestExports_BudgetOrStatedReason: no package exports more than
// maxExported names unless its package doc says why.
func TestExports_BudgetOrStatedReason(t *testing.T) {
	for _, p := range goList(t) {
		r, _ := rel(p.ImportPath)
		if isHarness(r) || generated[r] || p.Name == "main" {
			continue
		}
		names, doc := exported(t, p)
		if len(names) <= maxExported {
			continue
		}
		if !strings.Contains(strings.Join(strings.Fields(doc), " "), reasonMarker) {
			sort.Strings(names)
			t.Errorf("package %s exports %d names (budget %d) and its doc does not say why (%q…): %s",
				r, len(names), maxExported, reasonMarker, strings.Join(names, " "))
		}
	}
}

func exported(t *testing.T, p listed) (names []string, doc string) {
	t.Helper()
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			doc += f.Doc.Text()
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					names = append(names, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names = append(names, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names = append(names, n.Name)
							}
						}
					}
				}
			}
		}
	}
	return names, doc
}

// TestLayers_DocumentedInArchitectureMD: the layer table of
// docs/architecture.md lists exactly the packages of the table above, at
// the same layers (the module root is written `lancekeeper`).
func TestLayers_DocumentedInArchitectureMD(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]int{}
	for _, line := range strings.Split(string(raw), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		layer, err := strconv.Atoi(strings.TrimSpace(cells[1]))
		if err != nil {
			continue
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[2], -1) {
			name := m[1]
			if name == "lancekeeper" {
				name = "."
			}
			doc[name] = layer
		}
	}
	for p, l := range layers {
		if dl, ok := doc[p]; !ok || dl != l {
			t.Errorf("package %s is layer %d in tests/layout but %d (present %v) in docs/architecture.md", p, l, dl, ok)
		}
	}
	for p, l := range doc {
		if _, ok := layers[p]; !ok {
			t.Errorf("docs/architecture.md lists %s at layer %d, tests/layout does not", p, l)
		}
	}
}
