package s3_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/tests/s3util"
)

// repoRoot is the directory holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// buildCLI builds the lancekeeper command into a temporary directory.
func buildCLI(t *testing.T, ctx context.Context) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the S3 suite builds the lancekeeper binary and needs the go command: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "lancekeeper")
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", bin, "./cmd/lancekeeper")
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/lancekeeper: %v\n%s", err, out)
	}
	return bin
}

// cli runs the built binary with the test's environment (the S3 client
// credentials s3util.Start set).
type cli struct {
	t   *testing.T
	ctx context.Context
	bin string
}

func (c cli) run(args ...string) (int, string, string) {
	c.t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(c.ctx, c.bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	}
	c.t.Fatalf("lancekeeper %s: %v", strings.Join(args, " "), err)
	return 0, "", ""
}

// ok runs a command that must succeed; with v non-nil its stdout is JSON
// decoded into v.
func (c cli) ok(v any, args ...string) string {
	c.t.Helper()
	code, out, errs := c.run(args...)
	if code != 0 {
		c.t.Fatalf("lancekeeper %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errs)
	}
	if errs != "" {
		c.t.Errorf("lancekeeper %s succeeded but wrote to stderr:\n%s", strings.Join(args, " "), errs)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(out), v); err != nil {
			c.t.Fatalf("lancekeeper %s: output is not JSON: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return out
}

func writeCSV(t *testing.T, dir, name string, ids []int64) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("id,name\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "%d,row%d\n", id, id)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// testCLIBinary runs the real lancekeeper binary against s3:// URLs with
// endpoint parameters: write (create, append with v1 seeds), seeds enable,
// seeds (report and --where preview), inspect, versions, tag, restore,
// clone to a local root, doctor, and a missing dataset's exit code.
func testCLIBinary(t *testing.T, srv *s3util.Server) {
	ctx := testContext(t, 3*time.Minute)
	c := cli{t: t, ctx: ctx, bin: buildCLI(t, ctx)}
	dir := t.TempDir()
	url := srv.URL("cli/ds.lance")

	var w struct {
		Version       uint64 `json:"version"`
		Rows          int64  `json:"rows"`
		ZoneSeedsFlag bool   `json:"zone_write_seeds"`
		Files         []struct {
			Seeds []string `json:"seeds"`
		} `json:"files"`
	}
	c.ok(&w, "write", url, "--from", writeCSV(t, dir, "a.csv", idRange(0, 10)), "--mode", "create", "--json")
	if w.Version != 1 || w.Rows != 10 || w.ZoneSeedsFlag {
		t.Fatalf("write create: %+v", w)
	}
	// Activation warns on stderr what it means (issue 15 item 17).
	if code, out, errs := c.run("seeds", "enable", url, "--yes"); code != 0 ||
		!strings.Contains(out, "version 2 activates FLAG_ZONE_WRITE_SEEDS") ||
		!strings.Contains(errs, "refuse to open this dataset") {
		t.Fatalf("seeds enable: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	c.ok(&w, "write", url, "--from", writeCSV(t, dir, "b.csv", idRange(10, 30)), "--seeds", "all", "--rows-per-zone", "5", "--json")
	if w.Version != 3 || w.Rows != 20 || !w.ZoneSeedsFlag || len(w.Files) != 1 || len(w.Files[0].Seeds) != 2 {
		t.Fatalf("write append with seeds: %+v", w)
	}

	var seeds struct {
		Version        uint64 `json:"version"`
		ZoneSeedsFlag  bool   `json:"zone_write_seeds"`
		FilesWithSeeds int    `json:"files_with_seeds"`
		SeedsValid     int    `json:"seeds_valid"`
		SeedsInvalid   int    `json:"seeds_invalid"`
		Prune          *struct {
			ZonesTotal int    `json:"zones_total"`
			ZonesKept  int    `json:"zones_kept"`
			RowsKept   uint64 `json:"rows_kept"`
		} `json:"prune"`
	}
	c.ok(&seeds, "seeds", url, "--where", "id > 24", "--json")
	if seeds.Version != 3 || !seeds.ZoneSeedsFlag || seeds.FilesWithSeeds != 1 || seeds.SeedsValid != 2 || seeds.SeedsInvalid != 0 || seeds.Prune == nil {
		t.Fatalf("seeds: %+v", seeds)
	}
	// The seeded file holds ids 10..29 in zones of 5 rows: only the last
	// zone (25..29) can match id > 24.
	if seeds.Prune.ZonesTotal != 4 || seeds.Prune.ZonesKept != 1 {
		t.Errorf("pruning preview: %+v", *seeds.Prune)
	}

	var ins struct {
		Version   uint64   `json:"version"`
		NumRows   *uint64  `json:"num_rows"`
		FlagNames []string `json:"reader_feature_flag_names"`
		Tags      []string `json:"tags"`
	}
	c.ok(&ins, "inspect", url, "--json")
	if ins.Version != 3 || ins.NumRows == nil || *ins.NumRows != 30 || !slices.Contains(ins.FlagNames, "flag_zone_write_seeds") {
		t.Fatalf("inspect: %+v", ins)
	}
	var vs []struct {
		Version uint64 `json:"version"`
	}
	c.ok(&vs, "versions", url, "--json")
	if len(vs) != 3 || vs[0].Version != 1 || vs[2].Version != 3 {
		t.Fatalf("versions: %+v", vs)
	}

	var tag struct {
		Name    string `json:"name"`
		Version uint64 `json:"version"`
	}
	c.ok(&tag, "tag", "create", url, "first", "--version", "1", "--json")
	if tag.Name != "first" || tag.Version != 1 {
		t.Fatalf("tag create: %+v", tag)
	}
	if code, _, errs := c.run("tag", "create", url, "first", "--version", "2"); code != 2 || !strings.Contains(errs, "already exists") {
		t.Fatalf("duplicate tag: exit %d %s", code, errs)
	}
	var tags []struct {
		Name    string `json:"name"`
		Version uint64 `json:"version"`
	}
	c.ok(&tags, "tag", "list", url, "--json")
	if len(tags) != 1 || tags[0].Name != "first" {
		t.Fatalf("tag list: %+v", tags)
	}

	var rs struct {
		Version         uint64 `json:"version"`
		RestoredVersion uint64 `json:"restored_version"`
		ReaderFlags     uint64 `json:"reader_feature_flags"`
	}
	c.ok(&rs, "restore", url, "--tag", "first", "--json")
	if rs.Version != 4 || rs.RestoredVersion != 1 || rs.ReaderFlags&flags.ZoneWriteSeeds == 0 {
		t.Fatalf("restore: %+v (the sticky seeds bit must be kept)", rs)
	}
	c.ok(&ins, "inspect", url, "--json")
	if ins.Version != 4 || *ins.NumRows != 10 {
		t.Fatalf("inspect after restore: %+v", ins)
	}
	c.ok(&ins, "inspect", url, "--tag", "first", "--json")
	if ins.Version != 1 || !slices.Equal(ins.Tags, []string{"first"}) {
		t.Fatalf("inspect --tag: %+v", ins)
	}

	// Shallow clone of version 3 to another prefix of the bucket: its seeds
	// report reads the source's data files through the base path with the
	// clone URL's endpoint (store.OpenBase; no AWS_ENDPOINT_URL_S3 is set).
	var cl struct {
		Version   uint64   `json:"version"`
		BasePaths []string `json:"base_paths"`
	}
	unsetEndpointEnv(t)
	s3clone := srv.URL("cli/s3clone.lance")
	c.ok(&cl, "clone", url, s3clone, "--version", "3", "--json")
	if cl.Version != 3 || !slices.Equal(cl.BasePaths, []string{"s3://" + srv.Bucket + "/cli/ds.lance"}) {
		t.Fatalf("clone to S3: %+v", cl)
	}
	c.ok(&seeds, "seeds", s3clone, "--where", "id > 24", "--json")
	if seeds.Version != 3 || seeds.FilesWithSeeds != 1 || seeds.SeedsValid != 2 || seeds.Prune == nil || seeds.Prune.ZonesKept != 1 {
		t.Fatalf("seeds of the S3 clone: %+v", seeds)
	}
	c.ok(&ins, "inspect", s3clone, "--json")
	if ins.Version != 3 || ins.NumRows == nil || *ins.NumRows != 30 {
		t.Fatalf("inspect of the S3 clone: %+v", ins)
	}

	// Shallow clone of version 3 to a local root; its seeds report reads the
	// data files on S3 through the recorded base path.
	local := filepath.Join(dir, "local.lance")
	c.ok(&cl, "clone", url, local, "--version", "3", "--json")
	if cl.Version != 3 || !slices.Equal(cl.BasePaths, []string{"s3://" + srv.Bucket + "/cli/ds.lance"}) {
		t.Fatalf("clone: %+v", cl)
	}
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
	c.ok(&seeds, "seeds", local, "--json")
	if seeds.Version != 3 || seeds.FilesWithSeeds != 1 || seeds.SeedsValid != 2 {
		t.Fatalf("seeds of the local clone: %+v", seeds)
	}

	// doctor against the server, through the binary.
	var doc struct {
		OK     bool   `json:"ok"`
		Kind   string `json:"kind"`
		Checks []struct {
			Result string `json:"result"`
		} `json:"checks"`
	}
	c.ok(&doc, "doctor", srv.URL("cli/doctor"), "--contenders", "4", "--rounds", "3", "--json")
	if !doc.OK || doc.Kind != "s3" || len(doc.Checks) != 7 {
		t.Fatalf("doctor: %+v", doc)
	}

	// A missing dataset is bad input: exit 2, one line on stderr.
	code, out, errs := c.run("inspect", srv.URL("cli/missing.lance"))
	if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "lancekeeper inspect: ") {
		t.Fatalf("inspect of a missing dataset: exit %d stdout %q stderr %q", code, out, errs)
	}
}
