package compat_test

// The node peer driver (tests/peer, via tests/peerlance) must report every
// corpus dataset the way Lance 12 did when the corpus .expect.json files were
// made: this proves the driver before other suites trust it. Each dataset is
// read from a scratch copy, which must be unchanged afterwards (Lance must not
// write on read).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// expectFiles lists the corpus .expect.json files, relative to the corpus.
func expectFiles(t *testing.T, corpus string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(corpus, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".expect.json") {
			rel, err := filepath.Rel(corpus, path)
			if err != nil {
				return err
			}
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// decodeJSON decodes with numbers kept as written.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// treeDigest hashes every file path and content under dir.
func treeDigest(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// missingDataFile matches a data file path in Lance's "Not found" errors.
// When several data files are missing (historical/0.5.9 stores none), which
// one Lance reports first varies from run to run: its fragment reads race.
var missingDataFile = regexp.MustCompile(`<dataset>/data/[0-9a-f-]+\.lance`)

// comparableVersion turns one version entry (the driver's or the expect
// file's) into the shape both share: the expect file's independent manifest
// parse is dropped, Lance error messages get "<dataset>" for the scratch
// paths (and a placeholder for a missing data file's name), and num_fragments_error (which the expect files do not record) is
// dropped.
func comparableVersion(v any, paths []string) map[string]any {
	m, _ := v.(map[string]any)
	out := map[string]any{}
	for k, x := range m {
		switch {
		case k == "manifest" || k == "num_fragments_error":
		case strings.HasSuffix(k, "_error"):
			s, _ := x.(string)
			out[k] = missingDataFile.ReplaceAllString(peerlance.NormalizeMessage(s, paths...), "<dataset>/data/<missing>.lance")
		default:
			out[k] = x
		}
	}
	return out
}

func comparableVersions(vs any, paths []string) []map[string]any {
	list, _ := vs.([]any)
	out := make([]map[string]any, len(list))
	for i, v := range list {
		out[i] = comparableVersion(v, paths)
	}
	return out
}

func comparableBranches(bs any, paths []string) map[string]any {
	m, _ := bs.(map[string]any)
	out := map[string]any{}
	for name, b := range m {
		bm, _ := b.(map[string]any)
		c := map[string]any{}
		for k, x := range bm {
			if k == "versions" {
				c[k] = comparableVersions(x, paths)
			} else {
				c[k] = x
			}
		}
		out[name] = c
	}
	return out
}

func jsonString(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

// TestPeerInfoMatchesCorpusExpect runs `info` on a scratch copy of every
// corpus dataset and compares it with the dataset's .expect.json: latest
// version, manifest naming, tags, and per version the timestamp, Lance's
// summary metadata, row count, schema (type strings, nullability, metadata,
// children, dictionaries), indices, fragment count and tags, plus branches.
func TestPeerInfoMatchesCorpusExpect(t *testing.T) {
	corpus, err := peerlance.CorpusDir()
	if err != nil {
		t.Skipf("\n!!!!! LANCE CORPUS NOT FOUND (%v): the peer driver was NOT checked against the corpus !!!!!", err)
	}
	p := peerlance.ServeForTest(t)
	files := expectFiles(t, corpus)
	if len(files) < 20 {
		t.Fatalf("found only %d .expect.json files under %s", len(files), corpus)
	}
	for _, rel := range files {
		t.Run(strings.TrimSuffix(rel, ".expect.json"), func(t *testing.T) {
			record(t, catCorpus)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			raw, err := os.ReadFile(filepath.Join(corpus, rel))
			if err != nil {
				t.Fatal(err)
			}
			expV, err := decodeJSON(raw)
			if err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			exp := expV.(map[string]any)
			if exp["format"] != "lance-corpus-expect/1" {
				t.Fatalf("%s: unknown format %v", rel, exp["format"])
			}
			ds, _ := exp["dataset"].(string)
			dir := filepath.Join(t.TempDir(), filepath.Base(ds))
			if err := peerlance.CopyDir(filepath.Join(corpus, ds), dir); err != nil {
				t.Fatal(err)
			}
			before := treeDigest(t, dir)

			out, err := p.Run(ctx, "info", dir)
			if openErr, ok := exp["open_error"]; ok {
				t.Fatalf("expect file records open_error %v; this test does not handle it (got %v)", openErr, err)
			}
			if err != nil {
				t.Fatal(err)
			}
			gotV, err := decodeJSON(out)
			if err != nil {
				t.Fatal(err)
			}
			got := gotV.(map[string]any)
			paths := []string{dir}
			if uri, ok := got["dataset_uri"].(string); ok {
				paths = append(paths, uri)
			}

			for _, k := range []string{"latest_version", "uses_v2_manifest_paths", "tags"} {
				if !reflect.DeepEqual(got[k], exp[k]) {
					t.Errorf("%s: peer %s, Lance 12 expect %s", k, jsonString(got[k]), jsonString(exp[k]))
				}
			}
			gv := comparableVersions(got["versions"], paths)
			ev := comparableVersions(exp["versions"], paths)
			if len(gv) != len(ev) {
				t.Fatalf("peer lists %d versions, expect %d", len(gv), len(ev))
			}
			for i := range ev {
				for k := range mergeKeys(gv[i], ev[i]) {
					if !reflect.DeepEqual(gv[i][k], ev[i][k]) {
						t.Errorf("version %v %s:\npeer   %s\nexpect %s", ev[i]["version"], k, jsonString(gv[i][k]), jsonString(ev[i][k]))
					}
				}
			}
			if gb, eb := comparableBranches(got["branches"], paths), comparableBranches(exp["branches"], paths); !reflect.DeepEqual(gb, eb) {
				t.Errorf("branches:\npeer   %s\nexpect %s", jsonString(gb), jsonString(eb))
			}
			// The view info checks out by default is the latest version.
			if co, _ := got["checked_out"].(map[string]any); fmt.Sprint(co["version"]) != fmt.Sprint(exp["latest_version"]) {
				t.Errorf("checked_out version %v, want latest %v", co["version"], exp["latest_version"])
			}

			after := treeDigest(t, dir)
			if !reflect.DeepEqual(before, after) {
				t.Errorf("reading with Lance changed the dataset copy (%d files before, %d after)", len(before), len(after))
			}
		})
	}
}

func mergeKeys(a, b map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// TestPeerRowsAtCorpusTagsAndVersions reads rows of corpus datasets at tags
// and versions and checks them against the expect file's row counts, and that
// the row addresses are unique and every row has one value per column.
func TestPeerRowsAtCorpusTagsAndVersions(t *testing.T) {
	corpus, err := peerlance.CorpusDir()
	if err != nil {
		t.Skipf("\n!!!!! LANCE CORPUS NOT FOUND (%v): peer rows were NOT checked against the corpus !!!!!", err)
	}
	p := peerlance.ServeForTest(t)
	for _, ds := range []string{"lance12/tags.lance", "lance12/all_types.lance", "lance12/stable_row_ids.lance", "lance12/schema_evolution.lance", "lance12/compaction.lance"} {
		t.Run(ds, func(t *testing.T) {
			record(t, catCorpus)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			raw, err := os.ReadFile(filepath.Join(corpus, ds+".expect.json"))
			if err != nil {
				t.Fatal(err)
			}
			var exp struct {
				Versions []struct {
					Version  uint64 `json:"version"`
					RowCount *int64 `json:"row_count"`
					Schema   *struct {
						Fields []struct {
							Name string `json:"name"`
						} `json:"fields"`
					} `json:"schema"`
				} `json:"versions"`
				Tags map[string]struct {
					Version uint64 `json:"version"`
				} `json:"tags"`
			}
			if err := json.Unmarshal(raw, &exp); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), filepath.Base(ds))
			if err := peerlance.CopyDir(filepath.Join(corpus, ds), dir); err != nil {
				t.Fatal(err)
			}
			counts := map[uint64]int64{}
			for _, v := range exp.Versions {
				if v.RowCount == nil || v.Schema == nil {
					continue
				}
				counts[v.Version] = *v.RowCount
				rows, err := p.Rows(ctx, dir, peerlance.AtVersion(v.Version))
				if err != nil {
					t.Fatal(err)
				}
				if rows.Version != v.Version || int64(rows.NumRows) != *v.RowCount {
					t.Errorf("rows at version %d: version %d, %d rows; expect %d rows", v.Version, rows.Version, rows.NumRows, *v.RowCount)
				}
				if len(rows.Columns) != len(v.Schema.Fields) {
					t.Errorf("version %d: %d columns, expect schema has %d", v.Version, len(rows.Columns), len(v.Schema.Fields))
				}
				seen := map[string]bool{}
				for i, a := range rows.RowAddrs {
					if seen[a] {
						t.Errorf("version %d: row address %s appears twice", v.Version, a)
					}
					seen[a] = true
					if len(rows.Rows[i]) != len(rows.Columns) {
						t.Fatalf("version %d row %d: %d values for %d columns", v.Version, i, len(rows.Rows[i]), len(rows.Columns))
					}
				}
			}
			for name, tag := range exp.Tags {
				rows, err := p.Rows(ctx, dir, peerlance.AtTag(name))
				if err != nil {
					t.Fatal(err)
				}
				if rows.Version != tag.Version || int64(rows.NumRows) != counts[tag.Version] {
					t.Errorf("rows at tag %s: version %d with %d rows; expect version %d with %d", name, rows.Version, rows.NumRows, tag.Version, counts[tag.Version])
				}
			}
		})
	}
}

// TestPeerPassesLanceRefusalThrough sets an unknown feature flag (bit 16,
// FLAG_ZONE_WRITE_SEEDS) in the latest manifest of a corpus copy and checks
// that the driver exits with code 3 carrying Lance 12's unsupported-flags
// message, which names all reader flags (65537 here: deletions + bit 16), for
// reads and writes (zone-seeds.md R55, R57 are asserted by the
// refusal suite; this only proves the message reaches Go intact).
func TestPeerPassesLanceRefusalThrough(t *testing.T) {
	record(t, catRefusal)
	corpus, err := peerlance.CorpusDir()
	if err != nil {
		t.Skipf("\n!!!!! LANCE CORPUS NOT FOUND (%v): refusal pass-through NOT checked !!!!!", err)
	}
	p := peerlance.ForTest(t) // one process per command: no state carried over
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "tags.lance")
	if err := peerlance.CopyDir(filepath.Join(corpus, "lance12", "tags.lance"), dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "_versions", manifest.ManifestName(manifest.V2, 4))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := manifest.Decode(path, data)
	if err != nil {
		t.Fatal(err)
	}
	f.Manifest.ReaderFeatureFlags |= 1 << 16
	f.Manifest.WriterFeatureFlags |= 1 << 16
	out, err := f.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"info", dir, "--brief"}, {"rows", dir}, {"delete", dir, "--where", "id = 1"}} {
		_, err := p.Run(ctx, args...)
		var le *peerlance.LanceError
		if !errors.As(err, &le) {
			t.Errorf("%v: got %v, want *LanceError", args, err)
			continue
		}
		msg := le.Normalized()
		want := fmt.Sprintf("This dataset cannot be read by this version of Lance. Please upgrade Lance to read this dataset. Flags: %d", f.Manifest.ReaderFeatureFlags)
		if !strings.Contains(msg, want) {
			t.Errorf("%v: Lance said %q; want its unsupported-flags message %q", args, msg, want)
		}
		t.Logf("%v -> op %s: %s", args[0], le.Op, msg)
	}
}
