package compat_test

// Lance → us, data pages (issue 12 item 1): tables with random schemas over
// every Arrow type Lance writes, created by real Lance 12 at data storage
// versions 2.1 and 2.2, decode with our datafile reader to exactly the rows
// Lance returns (value by value: nulls, nested nulls, NaN bit patterns).
// The corpus half (every data file of every version of
// ../shared/lance-corpus) is TestCorpus_OurLibraryMatchesExpect, which now
// compares the rows of every version; TestCorpus_EveryVersionDecodes below
// checks that no version was left out.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gocloud.dev/blob/fileblob"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// randomTableCount is the number of random tables per storage version
// (LANCEKEEPER_RANDOM_TABLES overrides; -short: 10).
func randomTableCount(t *testing.T) int {
	if s := os.Getenv("LANCEKEEPER_RANDOM_TABLES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("LANCEKEEPER_RANDOM_TABLES=%q: %v", s, err)
		}
		return n
	}
	if testing.Short() {
		return 10
	}
	return 100
}

// TestLanceToUs_RandomTablesDecode (spec lance-file-format-2.1.md §3–§7):
// 2 × randomTableCount tables (default 200) of random schemas and value
// profiles (all-null, constant, low/high cardinality, runs, wide values),
// written by Lance 12 at 2.1 and 2.2, read back by us and by Lance.
func TestLanceToUs_RandomTablesDecode(t *testing.T) {
	p := peerlance.ServeForTest(t)
	n := randomTableCount(t)
	for _, sv := range []string{"2.1", "2.2"} {
		t.Run("storage"+sv, func(t *testing.T) {
			record(t, catLanceToUs)
			checkRandomTables(t, p, sv, n, peerlance.RandomTableOptions{StorageVersion: sv}, nil)
		})
	}
}

// hintTableCount is the number of random tables with encoding hints per
// storage version (LANCEKEEPER_RANDOM_TABLES overrides; default 25, -short 5).
func hintTableCount(t *testing.T) int {
	if os.Getenv("LANCEKEEPER_RANDOM_TABLES") != "" {
		return randomTableCount(t)
	}
	if testing.Short() {
		return 5
	}
	return 25
}

// TestLanceToUs_RandomTablesEncodingHints (lance-file-format-2.1.md §7):
// random tables whose columns carry Lance's encoding field metadata
// (general zstd/lz4 compression and level, RLE threshold, dictionary
// divisor, byte stream split, mini-block/full-zip structural encoding),
// written by Lance 12 at 2.1 and 2.2, decode to Lance's rows; the pages'
// layouts and compressions (datafile Page.Kinds) are counted, and the
// ones the hints make Lance 12 write must all have been met.
func TestLanceToUs_RandomTablesEncodingHints(t *testing.T) {
	p := peerlance.ServeForTest(t)
	n := hintTableCount(t)
	for _, sv := range []string{"2.1", "2.2"} {
		t.Run("storage"+sv, func(t *testing.T) {
			record(t, catLanceToUs)
			kinds := map[string]int{}
			checkRandomTables(t, p, sv, n, peerlance.RandomTableOptions{StorageVersion: sv, EncodingHints: true, MaxRows: 3000}, kinds)
			t.Logf("storage %s page kinds: %v", sv, kinds)
			if n < 20 {
				return // too few tables to expect every kind
			}
			for _, k := range wantHintKinds {
				if kinds[k] == 0 {
					t.Errorf("no page of kind %q among %d tables written with encoding hints (kinds met: %v)", k, n, kinds)
				}
			}
		})
	}
}

// wantHintKinds are the page kinds (Page.Kinds) that Lance 12 writes for
// the random tables with encoding hints at 2.1 and 2.2.
var wantHintKinds = []string{"mini-block", "full-zip", "constant", "general:zstd", "general:lz4", "fsst", "byte_stream_split", "rle", "mini-block-dictionary", "inline_bitpacking", "out_of_line_bitpacking", "packed_struct"}

// checkRandomTables has Lance 12 write n random tables (seeds 1..n) at
// storage version sv and compares our rows with Lance's; kinds, when not
// nil, counts the page kinds of the data files.
func checkRandomTables(t *testing.T, p *peerlance.Peer, sv string, n int, opts peerlance.RandomTableOptions, kinds map[string]int) {
	ctx := peerContext(t)
	tmp := t.TempDir()
	var rows, failed, lanceRefused int
	for seed := uint64(1); seed <= uint64(n); seed++ {
		rec := peerlance.RandomTable(seed, opts)
		ipc := filepath.Join(tmp, fmt.Sprintf("t%d.arrow", seed))
		if err := peerlance.WriteIPCFile(ipc, rec.Schema(), rec); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(tmp, fmt.Sprintf("t%d.lance", seed))
		desc := fmt.Sprintf("seed %d (%d rows, schema %s)", seed, rec.NumRows(), strings.ReplaceAll(rec.Schema().String(), "\n", " "))
		rec.Release()
		if _, err := p.Create(ctx, dir, ipc, peerlance.CreateOptions{StorageVersion: sv}); err != nil {
			if errors.As(err, new(*peerlance.LanceError)) {
				t.Logf("%s: Lance 12 refuses to create it: %v", desc, err)
				lanceRefused++
				continue
			}
			t.Errorf("%s: Lance create: %v", desc, err)
			failed++
			continue
		}
		if kinds != nil {
			if err := countPageKinds(ctx, dir, kinds); err != nil {
				t.Errorf("%s: page kinds: %v", desc, err)
				failed++
			}
		}
		ours, _, err := readOurRows(ctx, dir, 0)
		if err != nil {
			t.Errorf("%s: our read: %v", desc, err)
			failed++
			continue
		}
		if ours.NotDecodable != "" {
			t.Errorf("%s: not decodable: %s", desc, ours.NotDecodable)
			failed++
			continue
		}
		lr, _, err := lanceRowsCanonical(ctx, p, dir)
		if errors.As(err, new(*peerlance.LanceError)) {
			// A Lance 12 bug on some nestings (e.g. "Structural
			// validity has 62 entries for an array with 63
			// values"): nothing to compare with; we did decode it.
			t.Logf("%s: Lance 12 cannot read back its own table (we decoded %d rows): %v", desc, len(ours.Rows), err)
			lanceRefused++
			continue
		}
		if err != nil {
			t.Errorf("%s: Lance rows: %v", desc, err)
			failed++
			continue
		}
		if d := diffRows("ours", ours, "Lance", lr); d != "" {
			t.Errorf("%s: rows differ:\n%s", desc, d)
			failed++
		}
		rows += len(ours.Rows)
		os.RemoveAll(dir)
		if failed > 10 {
			t.Fatal("too many failures")
		}
	}
	if lanceRefused > n/10 {
		t.Errorf("Lance 12 refused %d of %d tables: the generator should avoid what Lance cannot write or read", lanceRefused, n)
	}
	t.Logf("storage %s: %d random tables, %d identical to Lance's (%d rows), %d Lance itself could not create or read back", sv, n, n-failed-lanceRefused, rows, lanceRefused)
}

// countPageKinds adds the kinds of every page of the table's data files.
func countPageKinds(ctx context.Context, dir string, kinds map[string]int) error {
	files, err := filepath.Glob(filepath.Join(dir, "data", "*.lance"))
	if err != nil {
		return err
	}
	bucket, err := fileblob.OpenBucket(filepath.Join(dir, "data"), nil)
	if err != nil {
		return err
	}
	defer bucket.Close()
	for _, path := range files {
		f, err := datafile.Open(ctx, bucket, filepath.Base(path), datafile.OpenOptions{})
		if err != nil {
			return err
		}
		for c := range f.NumColumns() {
			cm := f.Column(c)
			for i := range cm.Pages {
				ks, err := cm.Pages[i].Kinds()
				if err != nil {
					return fmt.Errorf("%s column %d page %d: %w", filepath.Base(path), c, i, err)
				}
				for _, k := range ks {
					kinds[k]++
				}
			}
		}
	}
	return nil
}
