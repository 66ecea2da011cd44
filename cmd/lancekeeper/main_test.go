package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(&env{ctx: context.Background(), stdout: &out, stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("go.mod not found")
		}
		dir = filepath.Dir(dir)
	}
}

// writeDataset writes a one-version dataset with the given flag words.
func writeDataset(t *testing.T, reader, writer uint64) string {
	t.Helper()
	dir := t.TempDir()
	m := &pb.Manifest{Version: 1, ReaderFeatureFlags: reader, WriterFeatureFlags: writer,
		Fields: []*pb.Field{{Name: "x", ParentId: -1, LogicalType: "int64", Nullable: true}}}
	data, err := manifest.Encode(m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "_versions"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(manifest.ManifestPath(manifest.V2, 1))), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCLI_JSONContract checks every documented key of `inspect --json`
// (docs/cli.md) on the example dataset shipped in the repository.
func TestCLI_JSONContract(t *testing.T) {
	ds := filepath.Join(repoRoot(t), "examples", "tags.lance")
	code, out, errs := runCLI(t, "inspect", ds, "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"version", "naming_scheme", "reader_feature_flags", "writer_feature_flags",
		"reader_feature_flag_names", "writer_feature_flag_names", "writer_version", "data_format",
		"num_fragments", "physical_rows", "num_rows", "fields", "indices", "tags"} {
		if _, ok := got[k]; !ok {
			t.Errorf("inspect --json lacks %q", k)
		}
	}
	if got["naming_scheme"] != "V2" || got["version"].(float64) != 4 || got["num_rows"].(float64) != 29 {
		t.Errorf("unexpected values: %v %v %v", got["naming_scheme"], got["version"], got["num_rows"])
	}
	wv := got["writer_version"].(map[string]any)
	if wv["library"] != "lance" || wv["version"] != "12.0.0" {
		t.Errorf("writer_version = %v", wv)
	}
	f := got["fields"].([]any)[0].(map[string]any)
	for _, k := range []string{"id", "parent_id", "name", "logical_type", "nullable"} {
		if _, ok := f[k]; !ok {
			t.Errorf("field lacks %q", k)
		}
	}
	code, out, _ = runCLI(t, "inspect", "--tag", "release", "--json", ds)
	if code != exitOK || !strings.Contains(out, `"release"`) || !strings.Contains(out, `"version": 3`) {
		t.Errorf("--tag release: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "versions", ds, "--json")
	var vs []map[string]any
	if code != exitOK || json.Unmarshal([]byte(out), &vs) != nil || len(vs) != 4 {
		t.Fatalf("versions --json: exit %d\n%s", code, out)
	}
	for _, k := range []string{"version", "timestamp", "naming_scheme"} {
		if _, ok := vs[0][k]; !ok {
			t.Errorf("versions --json element lacks %q", k)
		}
	}
	if code, out, _ := runCLI(t, "inspect", ds); code != exitOK || !strings.Contains(out, "rows") {
		t.Errorf("human output: exit %d\n%s", code, out)
	}
}

// TestCLI_BadInputExits2 checks that bad input gives exit 2 and exactly
// one line on stderr naming the file and the problem, never a panic.
func TestCLI_BadInputExits2(t *testing.T) {
	garbage := t.TempDir()
	os.MkdirAll(filepath.Join(garbage, "_versions"), 0o755)
	os.WriteFile(filepath.Join(garbage, "_versions", "1.manifest"), []byte("this is not a manifest at all"), 0o644)
	truncated := writeDataset(t, 0, 0)
	p := filepath.Join(truncated, filepath.FromSlash(manifest.ManifestPath(manifest.V2, 1)))
	data, _ := os.ReadFile(p)
	os.WriteFile(p, data[:len(data)-3], 0o644)
	mixed := writeDataset(t, 0, 0)
	os.WriteFile(filepath.Join(mixed, "_versions", "2.manifest"), data, 0o644)
	file := filepath.Join(t.TempDir(), "plain.txt")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing path", []string{"inspect", filepath.Join(garbage, "nope")}, "no such dataset"},
		{"garbage manifest", []string{"inspect", garbage}, "1.manifest"},
		{"truncated manifest", []string{"inspect", truncated}, "magic"},
		{"mixed naming", []string{"versions", mixed}, "multiple manifest naming schemes"},
		{"not a directory", []string{"inspect", file}, "not a directory"},
		{"empty dir", []string{"inspect", t.TempDir()}, "no manifest"},
		{"unknown scheme", []string{"inspect", "weird://x"}, "unknown scheme"},
		{"unknown tag", []string{"inspect", truncated, "--tag", "nope"}, "nope"},
		{"version and tag", []string{"inspect", truncated, "--tag", "a", "--version", "1"}, "not both"},
		{"unknown command", []string{"frobnicate"}, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := runCLI(t, tc.args...)
			if code != exitBadInput {
				t.Fatalf("exit %d, want 2; stderr %q", code, errs)
			}
			if strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 || !strings.Contains(errs, tc.want) || strings.Contains(errs, "goroutine") {
				t.Fatalf("stderr must be one line mentioning %q, got %q", tc.want, errs)
			}
		})
	}
}

// TestSpec6_3_CheckExitCode: inspect shows an unsupported bit; --check
// exits 3 when a reader or writer would refuse.
func TestSpec6_3_CheckExitCode(t *testing.T) {
	for _, tc := range []struct {
		name           string
		reader, writer uint64
		want           int
	}{
		{"supported", 1, 1, exitOK},
		{"unknown writer bit 20", 0, 1 << 20, exitRefused},
		{"unknown reader bit 9", 1 << 9, 1 << 9, exitRefused},
		{"half-set bit 16", 1 << 16, 0, exitRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := writeDataset(t, tc.reader, tc.writer)
			code, out, _ := runCLI(t, "inspect", ds)
			if code != exitOK {
				t.Fatalf("inspect without --check must succeed, exit %d", code)
			}
			if tc.want == exitRefused && !strings.Contains(out, "REFUSE") {
				t.Fatalf("human output does not say what would be refused:\n%s", out)
			}
			code, _, errs := runCLI(t, "inspect", ds, "--check")
			if code != tc.want {
				t.Fatalf("--check exit %d, want %d (%s)", code, tc.want, errs)
			}
		})
	}
}
