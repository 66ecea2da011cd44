package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

var errPowerLoss = errors.New("injected power loss")

// powerModel follows the steps of the deferred durable write path
// (steps.go) and models what a power loss keeps: a file survives only when
// its content was fdatasynced (an fdatasync that began after the file got
// its name, and returned) and its name covered by a directory fsync that
// began after the name was made and returned; everything else may be
// lost. Each sync's start and end are paired by the id the store gives
// it.
type powerModel struct {
	t       *testing.T
	crashAt int // index of the "before" step that loses power (-1: none)

	mu      sync.Mutex
	n       int      // "before" steps seen
	order   []string // the steps seen, in order
	down    bool
	named   map[string]bool // names made (created, or linked)
	gen     map[string]int  // per name, how many times it was made (a replacement is a new file)
	content map[string]bool // fdatasynced
	entry   map[string]bool // names covered by a completed directory fsync
	begun   map[uint64]snap // per directory fsync begun and not returned (by id)
	synced  map[uint64]int  // per fdatasync begun and not returned (by id), the file's generation then
	// prereq: per manifest path, the paths it names.
	prereq map[string][]string
	// pendingLink: the content of the manifest being linked was durable
	// (the unnamed file's fdatasync is reported under the name it gets).
	pendingLink bool
}

// linkedContent: a linked manifest keeps the durability of the unnamed
// file it was (its content was synced under the name it was going to get).
func (m *powerModel) linkedContent(string) bool { return m.pendingLink }

// snap: the names (and their generations) a directory fsync covers.
type snap map[string]int

func newPowerModel(t *testing.T, crashAt int, prereq map[string][]string) *powerModel {
	return &powerModel{
		t: t, crashAt: crashAt, prereq: prereq,
		named: map[string]bool{}, gen: map[string]int{}, content: map[string]bool{}, entry: map[string]bool{},
		begun: map[uint64]snap{}, synced: map[uint64]int{},
	}
}

func isBefore(step string) bool {
	switch step {
	case stepCreate, stepDatasync, stepDirsync, stepLink:
		return true
	}
	return false
}

func (m *powerModel) hook(step, path string, id uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if isBefore(step) {
		if m.down {
			return errPowerLoss
		}
		if m.n == m.crashAt {
			m.down = true
			m.order = append(m.order, "CRASH at "+step+" "+path)
			return errPowerLoss
		}
		m.n++
	} else if m.down {
		// Completed after the power went: not durable (conservative),
		// and the process is gone, so nobody sees the call succeed (a
		// sync in flight at the crash must not let a create return
		// nil: the model would wrongly fault a durable name).
		return errPowerLoss
	}
	m.order = append(m.order, step+" "+path)
	switch step {
	case stepCreated, stepLinked:
		m.named[path] = true
		m.gen[path]++
		// A replacement is another file under the name: its content
		// and its name need syncs of their own.
		delete(m.entry, path)
		delete(m.content, path)
		if step == stepLinked {
			m.content[path] = m.linkedContent(path)
		}
	case stepDatasync:
		m.synced[id] = m.gen[path]
	case stepDatasynced:
		g, ok := m.synced[id]
		if !ok {
			m.t.Errorf("an fdatasync of %s returned that never began", path)
			return nil
		}
		delete(m.synced, id)
		if g == m.gen[path] {
			m.content[path] = true
		}
	case stepDirsync:
		s := snap{}
		for p := range m.named {
			if filepath.Dir(p) == path {
				s[p] = m.gen[p]
			}
		}
		m.begun[id] = s
	case stepDirsynced:
		s, ok := m.begun[id]
		if !ok {
			m.t.Errorf("a directory fsync of %s returned that never began", path)
			return nil
		}
		delete(m.begun, id)
		for p, g := range s {
			if g == m.gen[p] {
				m.entry[p] = true
			}
		}
	case stepLink:
		// The commit point: from here the manifest may reach the disk
		// with or without the directory fsync that follows, so every
		// file it names must be durable already, and so must its bytes.
		if !m.content[path] {
			m.t.Errorf("%s linked before its content was fdatasynced", path)
		}
		m.pendingLink = m.content[path]
		for _, p := range m.prereq[path] {
			if !m.content[p] || !m.entry[p] {
				m.t.Errorf("%s linked while %s it names was not durable (content %v, name %v)", path, p, m.content[p], m.entry[p])
			}
		}
	}
	return nil
}

// lose applies the worst a power loss can do to the files named (below
// root) — but keeps a linked manifest even when its name was not made
// durable, the case where what it names must be complete.
func (m *powerModel) lose(t *testing.T, root string) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for p := range m.named {
		if strings.HasSuffix(p, ".manifest") {
			continue
		}
		if !m.content[p] || !m.entry[p] {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
		}
	}
	_ = root
}

// TestCrashSafety_NoManifestNamesAFileBeforeItIsDurable checks the reduced
// durable sequence of a commit on the local backend (session 24: each
// deferred file's directory fsync starts when the file is created and is
// shared by files created together; its fdatasync starts at Close; the
// commit point waits for them, fdatasyncs the manifest's unnamed file,
// links it and fsyncs _versions/) at the level of its system calls, with a
// power loss at each step, in whatever order the parallel syncs run:
// at the link every file the manifest names — two data files in one
// directory, a deletion file, a transaction file replaced after a rebase
// (PutDeferred) — has durable content and a durable name, and so does the
// manifest's content (lance-table-format.md §5.1 write order: data,
// deletion and transaction files before the manifest); a create that
// returned nil has made its name durable; after the crash, a manifest that
// survives names only files that survive, complete.
func TestCrashSafety_NoManifestNamesAFileBeforeItIsDurable(t *testing.T) {
	ctx := context.Background()
	bodies := map[string]string{
		"data/a.lance":           "rows of a",
		"data/b.lance":           "rows of b",
		"_deletions/1-2-x.arrow": "deleted rows",
		"_transactions/1-x.txn":  "the rebased transaction",
	}
	const manifestKey = "_versions/2.manifest"
	run := func(t *testing.T, crashAt int) (*powerModel, string, error) {
		root := t.TempDir()
		s, err := Open(ctx, root)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		// Version 1 and the directories exist (made durably before).
		if err := s.Put(ctx, "_versions/1.manifest", []byte("m1")); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{"data", "_deletions", "_transactions"} {
			if err := mkdirAll(filepath.Join(root, d)); err != nil {
				t.Fatal(err)
			}
		}
		keys := []string{"data/a.lance", "data/b.lance", "_deletions/1-2-x.arrow", "_transactions/1-x.txn"}
		var paths []string
		for _, k := range keys {
			paths = append(paths, s.localPath(k))
		}
		m := newPowerModel(t, crashAt, map[string][]string{s.localPath(manifestKey): paths})
		s.steps = m.hook
		err = func() error {
			for _, k := range keys {
				body := bodies[k]
				if strings.HasSuffix(k, ".txn") {
					body = "the first transaction"
				}
				w, err := s.NewDeferredWriter(ctx, k)
				if err != nil {
					return err
				}
				if _, err := w.Write([]byte(body)); err != nil {
					_ = w.Abort()
					return err
				}
				if err := w.Close(); err != nil {
					return err
				}
			}
			// A rebase rewrote the transaction: replaced under its name.
			if err := s.PutDeferred(ctx, "_transactions/1-x.txn", []byte(bodies["_transactions/1-x.txn"])); err != nil {
				return err
			}
			// As a commit does: the hint is written while _versions/ is
			// fsynced.
			_, err := s.CreateIfAbsentAfterThen(ctx, manifestKey, []byte("m2"), keys, func() {
				_ = s.PutInPlace(ctx, "_versions/latest_version_hint.json", []byte(`{"version":2}`))
			})
			return err
		}()
		// Let every early sync finish before the files are judged.
		for _, p := range paths {
			if j := s.takeSync(p); j != nil {
				<-j.done
			}
		}
		s.syncs.mu.Lock()
		var dirs []*dirSync
		for _, d := range s.syncs.dirs {
			dirs = append(dirs, d)
		}
		s.syncs.mu.Unlock()
		for _, d := range dirs {
			<-d.job.done
		}
		return m, root, err
	}
	dry, _, err := run(t, -1)
	if err != nil {
		t.Fatal(err)
	}
	steps := dry.n
	for _, want := range []string{stepDirsync + " ", stepDatasync + " ", stepLink + " "} {
		if !slices.ContainsFunc(dry.order, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Fatalf("no %q step in %q", want, dry.order)
		}
	}
	for i := 0; i <= steps; i++ {
		crashAt := i
		if i == steps {
			crashAt = -1
		}
		t.Run(fmt.Sprintf("power loss at step %d", i), func(t *testing.T) {
			// The parallel syncs run in any order, and files created
			// together may share a directory fsync or not, so a run
			// may have fewer steps than the dry run: then it simply
			// completes. Each step is tried several times.
			for range 3 {
				crashRun(t, run, crashAt, manifestKey, bodies)
			}
		})
	}
}

func crashRun(t *testing.T, run func(*testing.T, int) (*powerModel, string, error), crashAt int, manifestKey string, bodies map[string]string) {
	t.Helper()
	m, root, err := run(t, crashAt)
	man := filepath.Join(root, filepath.FromSlash(manifestKey))
	m.mu.Lock()
	linked, durable := m.named[man], m.entry[man]
	m.mu.Unlock()
	if err == nil && !durable {
		t.Fatalf("the create returned nil but the manifest's name was not fsynced: %q", m.order)
	}
	if err != nil && !errors.Is(err, errPowerLoss) {
		t.Fatalf("got %v, want the injected power loss", err)
	}
	m.lose(t, root)
	got, rerr := os.ReadFile(man)
	switch {
	case !linked && rerr == nil:
		t.Fatalf("manifest present though never linked")
	case linked && (rerr != nil || string(got) != "m2"):
		t.Fatalf("linked manifest reads %q, %v", got, rerr)
	}
	if !linked {
		return
	}
	for k, want := range bodies {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(k)))
		if err != nil || string(b) != want {
			t.Errorf("the manifest survives but %s reads %q, %v (steps %q)", k, b, err, m.order)
		}
	}
}
