package commit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// txnFiles lists the .txn files of the dataset at dir.
func txnFiles(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, manifest.TransactionsDir))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestInlineTransactionOnly_Flag5PerCommitAndNoTxnFile checks the opt-in
// of lance-table-format.md §6.1 bit 5 (DISABLE_TRANSACTION_FILE, writer
// only, per commit, §6.2): a commit with Options.InlineTransactionOnly
// writes no _transactions/*.txn file, records transaction_file "" (§3.1
// field 12), carries its transaction in the inline section and sets bit 5 in
// the writer word only; the next commit without the option clears it (not
// inherited). A later commit whose read version predates the inline-only
// version is conflict-checked against the inline transaction (§5.2 a:
// inline section first) and succeeds.
func TestInlineTransactionOnly_Flag5PerCommitAndNoTxnFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := localStoreAt(t, dir)
	if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 0), WriteOptions{Mode: ModeCreate}); err != nil {
		t.Fatal(err)
	}
	before := txnFiles(t, dir)
	inline := Options{InlineTransactionOnly: true}
	res, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 10), WriteOptions{Mode: ModeAppend, Commit: inline})
	if err != nil {
		t.Fatal(err)
	}
	if got := txnFiles(t, dir); len(got) != len(before) {
		t.Fatalf("inline-only append wrote a transaction file: before %v, after %v", before, got)
	}
	f := readVersion(t, st, res.Version)
	m := f.Manifest
	if m.GetTransactionFile() != "" || res.TransactionFile != "" {
		t.Fatalf("transaction_file %q (result %q), want empty", m.GetTransactionFile(), res.TransactionFile)
	}
	if f.Transaction == nil || f.Transaction.GetUuid() != res.Transaction.GetUuid() {
		t.Fatalf("inline transaction %v, want the committed one (uuid %s)", f.Transaction, res.Transaction.GetUuid())
	}
	if m.GetWriterFeatureFlags()&flags.DisableTransactionFile == 0 || m.GetReaderFeatureFlags()&flags.DisableTransactionFile != 0 {
		t.Fatalf("flags reader %d writer %d: bit 5 must be set in the writer word only", m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags())
	}
	// A commit read at version 1 checks against version 2's inline
	// transaction: there is no file to fall back to.
	g := &getCounter{Store: st}
	r3 := mustCommit(t, g, NewReserveFragments(1, 2), Options{})
	for _, k := range g.gets {
		if strings.HasPrefix(k, manifest.TransactionsDir+"/") {
			t.Fatalf("conflict check read %s; the inline transaction is enough", k)
		}
	}
	if r3.Version != 3 || r3.Manifest.GetWriterFeatureFlags()&flags.DisableTransactionFile != 0 {
		t.Fatalf("commit after the inline-only one: version %d, writer flags %d (bit 5 is per commit)", r3.Version, r3.Manifest.GetWriterFeatureFlags())
	}
	if r3.TransactionFile == "" || len(txnFiles(t, dir)) != len(before)+1 {
		t.Fatalf("a default commit writes its transaction file: %q, files %v", r3.TransactionFile, txnFiles(t, dir))
	}
	if got := totalRows(t, st); got != 20 {
		t.Fatalf("rows %d, want 20", got)
	}
	checkDataReadable(t, st)
}

// TestLance12_InlineTransactionOnlyTable: real Lance 12 opens a table whose
// latest version was committed inline-only (writer flag bit 5, no .txn
// file), counts its rows and appends to it (bit 5 is in L12's supported
// mask, §6.1); Lance's own commit drops the bit (per commit, §6.2), and our
// next inline-only append follows Lance's version.
func TestLance12_InlineTransactionOnlyTable(t *testing.T) {
	peer := peerlance.ServeForTest(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "ds.lance")
	st := localStoreAt(t, mkdir(t, dir))
	inline := Options{InlineTransactionOnly: true}
	if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 0), WriteOptions{Mode: ModeCreate, Commit: inline}); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 10), WriteOptions{Mode: ModeAppend, Commit: inline}); err != nil {
		t.Fatal(err)
	}
	if got := txnFiles(t, dir); len(got) != 0 {
		t.Fatalf("inline-only commits wrote %v", got)
	}
	count := func(want int) {
		t.Helper()
		var out struct {
			RowCount int `json:"row_count"`
		}
		if err := peer.RunJSON(ctx, &out, "count", dir); err != nil {
			t.Fatalf("Lance count: %v", err)
		}
		if out.RowCount != want {
			t.Fatalf("Lance counts %d rows, want %d", out.RowCount, want)
		}
	}
	count(20)
	data := filepath.Join(t.TempDir(), "rows.json")
	if err := os.WriteFile(data, []byte(`[{"x": 100000, "s": "lance"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := peer.Run(ctx, "append", dir, "--data", data); err != nil {
		t.Fatalf("Lance 12 append to an inline-only table: %v", err)
	}
	count(21)
	if w := readVersion(t, st, 3).Manifest.GetWriterFeatureFlags(); w&flags.DisableTransactionFile != 0 {
		t.Fatalf("Lance's version 3 kept bit 5 (writer flags %d)", w)
	}
	res, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 20), WriteOptions{Mode: ModeAppend, Commit: inline})
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 4 {
		t.Fatalf("our append after Lance's committed version %d, want 4", res.Version)
	}
	count(31)
}
