package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
)

// TestServe_AutoCleanup (§5.2 step 4, issue 14 item 3): commits through the
// coordinator's HTTP API on a table whose config asks for automatic cleanup
// (interval 2, older than 1 ms, retain 2 versions) run it after every second
// version, as Lance does: old manifests go, the latest versions stay, the
// commits succeed, and the server logs the cleanup. A table config whose
// cleanup fails (a bad duration) still commits; the failure is only
// logged.
func TestServe_AutoCleanup(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	root := filepath.Join(tmp, "lake")
	csv := filepath.Join(tmp, "in.csv")
	writeCSV(t, csv, 0, 10)
	ds := filepath.Join(root, "t")
	bad := filepath.Join(root, "bad")
	for _, d := range []string{ds, bad} {
		if code, _, errs := runCLI(t, "write", d, "--from", csv); code != exitOK {
			t.Fatalf("create %s: %d %s", d, code, errs)
		}
	}
	setConfig := func(dir string, kv map[string]string) {
		st, err := store.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		head, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
		if err != nil {
			t.Fatal(err)
		}
		var ch []commit.ConfigChange
		for k, v := range kv {
			ch = append(ch, commit.ConfigChange{Key: k, Value: &v})
		}
		if _, err := commit.Commit(ctx, st, commit.NewUpdateConfig(head.Manifest.GetVersion(), commit.UpdateConfigSpec{Config: ch}), commit.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	// Version 2 of each table sets the config (a direct commit: no cleanup).
	setConfig(ds, map[string]string{"lance.auto_cleanup.interval": "2", "lance.auto_cleanup.older_than": "1ms", "lance.auto_cleanup.retain_versions": "2"})
	setConfig(bad, map[string]string{"lance.auto_cleanup.interval": "2", "lance.auto_cleanup.older_than": "soon"})
	time.Sleep(20 * time.Millisecond)

	url, logs, stop := startServe(t, "--root", "lake="+root, "--log-format", "json")
	versions := func(dir string) []string {
		ents, err := os.ReadDir(filepath.Join(dir, manifest.VersionsDir))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".manifest") {
				out = append(out, e.Name())
			}
		}
		return out
	}
	// Versions 3 (no cleanup due) and 4 (cleanup: keep 3 and 4).
	for i := 0; i < 2; i++ {
		time.Sleep(5 * time.Millisecond)
		if code, out, errs := runCLI(t, "write", ds, "--from", csv, "--coordinator", url); code != exitOK {
			t.Fatalf("append %d through the coordinator: %d %s %s", i, code, out, errs)
		}
	}
	// The cleanup runs in the dataset's worker after the answer.
	for i := 0; i < 500 && len(versions(ds)) != 2; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(versions(ds)); n != 2 {
		t.Fatalf("%d manifests after the cleanup at version 4, want 2 (versions 3, 4): %v\n%s", n, versions(ds), logs.String())
	}
	if code, out, errs := runCLI(t, "inspect", ds, "--json"); code != exitOK || !strings.Contains(out, `"version": 4`) || !strings.Contains(out, `"num_rows": 30`) {
		t.Fatalf("inspect after cleanup: %d %s %s", code, out, errs)
	}
	// The failing cleanup: the commit stands.
	if code, out, errs := runCLI(t, "write", bad, "--from", csv, "--coordinator", url); code != exitOK {
		t.Fatalf("append with a broken cleanup config: %d %s %s", code, out, errs)
	}
	if code, out, errs := runCLI(t, "write", bad, "--from", csv, "--coordinator", url); code != exitOK || !strings.Contains(out, "committed version 4") {
		t.Fatalf("append with a broken cleanup config: %d %s %s", code, out, errs)
	}
	for i := 0; i < 500 && !strings.Contains(logs.String(), `"msg":"auto cleanup failed"`); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(versions(bad)); n != 4 {
		t.Errorf("the broken cleanup removed versions: %v", versions(bad))
	}
	if c := stop(); c != exitOK {
		t.Fatalf("serve exited with %d: %s", c, logs.String())
	}
	for _, want := range []string{`"msg":"auto cleanup"`, `"removed_versions":2`, `"msg":"auto cleanup failed"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %s:\n%s", want, logs.String())
		}
	}
}
