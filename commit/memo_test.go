package commit

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
)

// getCounter is a local store that counts the reads it serves.
type getCounter struct {
	*store.Store
	mu   sync.Mutex
	gets []string
}

func (g *getCounter) Get(ctx context.Context, key string) ([]byte, error) {
	g.mu.Lock()
	g.gets = append(g.gets, key)
	g.mu.Unlock()
	return g.Store.Get(ctx, key)
}

// TestMemo_NextAppendReadsNothingBack: after a commit through a store, the
// next append through it starts from the manifest it just published
// (latestMemo) — neither the hint nor the manifest is read back — and still
// lands at the next version (lance-table-format.md §5.2: the latest
// manifest is the base of the next one).
func TestMemo_NextAppendReadsNothingBack(t *testing.T) {
	ctx := context.Background()
	st := localStore(t)
	if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 0), WriteOptions{Mode: ModeCreate}); err != nil {
		t.Fatal(err)
	}
	g := &getCounter{Store: st}
	for i := range 3 {
		res, err := WriteArrow(ctx, g, testRecords(testArrowSchema, 1, 10, int64(10*(i+1))), WriteOptions{Mode: ModeAppend})
		if err != nil {
			t.Fatal(err)
		}
		if res.Version != uint64(i+2) {
			t.Fatalf("append %d committed version %d", i, res.Version)
		}
	}
	if len(g.gets) != 0 {
		t.Fatalf("appends read %q back; the memo of the last commit should have served them", g.gets)
	}
	if got := totalRows(t, st); got != 40 {
		t.Fatalf("rows %d, want 40", got)
	}
	checkDataReadable(t, st)
}

// TestMemo_NotTrustedAfterAnotherWriter: a commit by another store (another
// process) makes the memo stale — the next version exists — and the append
// reads on from the store, keeping the other writer's rows (§5.2 a).
func TestMemo_NotTrustedAfterAnotherWriter(t *testing.T) {
	ctx := context.Background()
	st, dir := localStoreDir(t)
	if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 0), WriteOptions{Mode: ModeCreate}); err != nil {
		t.Fatal(err)
	}
	other := localStoreAt(t, dir)
	if _, err := WriteArrow(ctx, other, testRecords(testArrowSchema, 1, 7, 100), WriteOptions{Mode: ModeAppend}); err != nil {
		t.Fatal(err)
	}
	res, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 10), WriteOptions{Mode: ModeAppend})
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 3 || res.Attempts != 1 {
		t.Fatalf("version %d after %d attempts, want 3 at the first", res.Version, res.Attempts)
	}
	if got := totalRows(t, st); got != 27 {
		t.Fatalf("rows %d, want 27", got)
	}
}

// TestMemo_NotTrustedAfterTheDatasetWasMadeAgain: the dataset is deleted
// and made again under the same path by another store, up to the very
// version the memo names (so the next version is missing, as the memo
// expects). The manifest file's identity differs, so the append reads the
// new dataset and commits on top of it — never on the memo's stale
// manifest, whose data files are gone.
func TestMemo_NotTrustedAfterTheDatasetWasMadeAgain(t *testing.T) {
	ctx := context.Background()
	st, dir := localStoreDir(t)
	if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 0), WriteOptions{Mode: ModeCreate}); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 10), WriteOptions{Mode: ModeAppend}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	other := localStoreAt(t, dir)
	if _, err := WriteArrow(ctx, other, testRecords(testArrowSchema, 1, 3, 0), WriteOptions{Mode: ModeCreate}); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteArrow(ctx, other, testRecords(testArrowSchema, 1, 3, 3), WriteOptions{Mode: ModeAppend}); err != nil {
		t.Fatal(err)
	}
	res, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 4, 6), WriteOptions{Mode: ModeAppend})
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 3 {
		t.Fatalf("committed version %d, want 3", res.Version)
	}
	if got := totalRows(t, st); got != 10 {
		t.Fatalf("rows %d, want 10 (3+3 of the new dataset, 4 appended)", got)
	}
	checkDataReadable(t, st)
}

// TestPutInPlace_HintTornOrShorter: the hint is written in place (no
// temporary file, no rename): a longer old hint is cut to the new length,
// garbage is replaced, and no staging file is left in _versions/.
func TestPutInPlace_HintTornOrShorter(t *testing.T) {
	ctx := context.Background()
	st, dir := localStoreDir(t)
	if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 0), WriteOptions{Mode: ModeCreate}); err != nil {
		t.Fatal(err)
	}
	hint := manifest.VersionsDir + "/" + manifest.HintName
	if err := os.WriteFile(dir+"/"+hint, []byte(`{"version":123456789} and garbage`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 10), WriteOptions{Mode: ModeAppend}); err != nil {
		t.Fatal(err)
	}
	if data, err := st.Get(ctx, hint); err != nil || string(data) != `{"version":2}` {
		t.Fatalf("hint %q, %v", data, err)
	}
	ents, err := os.ReadDir(dir + "/" + manifest.VersionsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".manifest") && e.Name() != manifest.HintName {
			t.Errorf("left behind in _versions/: %s", e.Name())
		}
	}
}

// TestMemo_SharedByConcurrentWritersOfOneStore: goroutines appending
// through one store start from the same memo — every append lands at its
// own version and no row is lost (§5.2: each commit follows the latest
// manifest). Run it with -race to check the sharing.
func TestMemo_SharedByConcurrentWritersOfOneStore(t *testing.T) {
	ctx := context.Background()
	st := localStore(t)
	if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 0), WriteOptions{Mode: ModeCreate}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 4
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				start := int64(1000*(w+1) + 10*i)
				if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, start), WriteOptions{Mode: ModeAppend, Commit: Options{MaxRetries: 100}}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if v := latestVersion(t, st); v != 1+writers*each {
		t.Fatalf("latest version %d, want %d", v, 1+writers*each)
	}
	if got := totalRows(t, st); got != 10*(1+writers*each) {
		t.Fatalf("rows %d, want %d", got, 10*(1+writers*each))
	}
	checkDataReadable(t, st)
}
