package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// TestSeedsVerify_HostileDataFiles_Exit4NamingTheFile (issue 12 item 3,
// hostile bytes): on copies of the corpus table seeds_v0_zonemap (v0
// seeds Lance 12 wrote, 2.2 files), one seeded data file truncated or with
// one bit flipped at spread-out offsets: `seeds verify` never panics,
// exits 0 (nothing it relies on changed) or 4 (docs/cli.md: a seed
// unsound, unusable or unverified, or a data file unreadable) and then
// names the damaged file; `--json` stays valid JSON with the same verdict.
func TestSeedsVerify_HostileDataFiles_Exit4NamingTheFile(t *testing.T) {
	corpus, err := peerlance.CorpusDir()
	if err != nil {
		if os.Getenv("LANCEKEEPER_REQUIRE_PEER") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	src := filepath.Join(corpus, "lance12", "seeds_v0_zonemap.lance")
	base := filepath.Join(t.TempDir(), "base.lance")
	if err := peerlance.CopyDir(src, base); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runCLI(t, "seeds", "verify", base); code != 0 {
		t.Fatalf("undamaged copy: exit %d\n%s%s", code, out, errs)
	}
	// the largest data file carries seeds (those Lance wrote after the
	// ZoneMap declaration are the larger ones)
	files, _ := filepath.Glob(filepath.Join(base, "data", "*.lance"))
	var victim string
	var size int64
	for _, p := range files {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			victim, size = p, fi.Size()
		}
	}
	orig, err := os.ReadFile(victim)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(victim)
	type mutation struct {
		what string
		b    []byte
	}
	var muts []mutation
	for _, cut := range []int{0, 7, 40, len(orig) / 3, len(orig) / 2, len(orig) - 41, len(orig) - 1} {
		muts = append(muts, mutation{"truncated", orig[:cut]})
	}
	for k := 1; k < 24; k++ {
		off := len(orig) * k / 24
		b := append([]byte(nil), orig...)
		b[off] ^= 1 << (k % 8)
		muts = append(muts, mutation{"bit flip", b})
	}
	for i := 0; i < 8; i++ { // the footer and offset tables
		b := append([]byte(nil), orig...)
		b[len(orig)-40+5*i] ^= 0x80
		muts = append(muts, mutation{"footer bit flip", b})
	}
	fours := 0
	for i, m := range muts {
		dir := filepath.Join(t.TempDir(), "d.lance")
		if err := peerlance.CopyDir(base, dir); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "data", name), m.b, 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := runCLI(t, "seeds", "verify", dir)
		switch code {
		case 0:
		case 4:
			fours++
			if !strings.Contains(out+errs, name) {
				t.Errorf("mutation %d (%s): exit 4 without naming %s:\n%s%s", i, m.what, name, out, errs)
			}
		default:
			t.Errorf("mutation %d (%s): exit %d, want 0 or 4:\n%s%s", i, m.what, code, out, errs)
		}
		jcode, jout, jerrs := runCLI(t, "seeds", "verify", dir, "--json")
		var doc map[string]any
		if jcode != code || json.Unmarshal([]byte(jout), &doc) != nil {
			t.Errorf("mutation %d (%s): --json exit %d (text %d), output %q %s", i, m.what, jcode, code, jout, jerrs)
		}
	}
	if fours < len(muts)/2 {
		t.Errorf("only %d of %d damaged copies fail seeds verify", fours, len(muts))
	}
}
