package coordinator

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	coordapi "github.com/lancekeeper/lancekeeper/coordinator/api"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// referencesOnce fails when the latest version references a data file
// twice (rows doubled for Lance 12).
func referencesOnce(t *testing.T, m *pb.Manifest) {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range m.GetFragments() {
		for _, df := range f.GetFiles() {
			if seen[df.GetPath()] {
				t.Fatalf("version %d references %s twice", m.GetVersion(), df.GetPath())
			}
			seen[df.GetPath()] = true
		}
	}
}

// TestItem2_IdenticalAppendsInOneBatch is issue 15 item 2: two identical
// appends in flight together with batching both got 200 and one version
// referenced the data file twice. Now one commits and the other is refused.
func TestItem2_IdenticalAppendsInOneBatch(t *testing.T) {
	for _, absent := range []bool{false, true} {
		name := "no_requirement"
		if absent {
			name = "data_files_absent"
		}
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, Config{BatchWindow: 300 * time.Millisecond})
			st := ts.createDataset(t, "ds")
			f := writeFile(t, st, 7, 8)
			req := appendReq(t, "ds", 1, true, f)
			if absent {
				req.Requirements = []coordapi.Requirement{{Type: coordapi.RequireDataFilesAbsent}}
			}
			var wg sync.WaitGroup
			codes := make([]int, 2)
			bodies := make([]*coordapi.ErrorBody, 2)
			for i := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, codes[i], bodies[i] = ts.commit(t, req)
				}()
			}
			wg.Wait()
			ok := 0
			for i := range 2 {
				if codes[i] == http.StatusOK {
					ok++
				} else if codes[i] != http.StatusBadRequest && codes[i] != http.StatusConflict {
					t.Fatalf("answer %d: %d %+v", i, codes[i], bodies[i])
				}
			}
			if ok != 1 {
				t.Fatalf("%d of 2 identical appends committed (%v %+v %+v)", ok, codes, bodies[0], bodies[1])
			}
			m := latest(t, st).Manifest
			referencesOnce(t, m)
			if len(m.GetFragments()) != 2 {
				t.Fatalf("%d fragments, want 2", len(m.GetFragments()))
			}
		})
	}
}

// TestItem2_SameFileTwiceInOneRequest: one request naming the same data
// file in two fragments was committed; it is 400 invalid_transaction.
func TestItem2_SameFileTwiceInOneRequest(t *testing.T) {
	ts := newTestServer(t, Config{})
	st := ts.createDataset(t, "ds")
	f := writeFile(t, st, 7, 8)
	_, code, eb := ts.commit(t, appendReq(t, "ds", 1, false, f, proto.Clone(f).(*pb.DataFragment)))
	wantErr(t, code, eb, http.StatusBadRequest, coordapi.CodeInvalidTransaction)
	// And a file the latest version already references (no requirement):
	// the commit engine's invariant check refuses it.
	first := latest(t, st).Manifest.GetFragments()[0]
	again := &pb.DataFragment{PhysicalRows: first.GetPhysicalRows(), Files: first.GetFiles()}
	_, code, eb = ts.commit(t, appendReq(t, "ds", 1, false, again))
	wantErr(t, code, eb, http.StatusBadRequest, coordapi.CodeInvalidTransaction)
	referencesOnce(t, latest(t, st).Manifest)
}

// TestItem3_DescriptionMustMatchTheFile is issue 15 item 3: the
// coordinator committed whatever the client said about a file it opened.
func TestItem3_DescriptionMustMatchTheFile(t *testing.T) {
	ts := newTestServer(t, Config{})
	st := ts.createDataset(t, "ds")
	for _, c := range []struct {
		name, want string
		edit       func(f *pb.DataFragment)
	}{
		{"rows_3_of_10", "physical_rows 3", func(f *pb.DataFragment) { f.PhysicalRows = 3 }},
		{"rows_million", "physical_rows 1000000", func(f *pb.DataFragment) { f.PhysicalRows = 1_000_000 }},
		{"field_ids", "fields", func(f *pb.DataFragment) { f.Files[0].Fields = []int32{1} }},
		{"file_size", "file_size_bytes", func(f *pb.DataFragment) { f.Files[0].FileSizeBytes += 5 }},
		{"column_indices_out_of_range", "out of range", func(f *pb.DataFragment) { f.Files[0].ColumnIndices = []int32{9} }},
		{"file_version", "file version", func(f *pb.DataFragment) { f.Files[0].FileMajorVersion, f.Files[0].FileMinorVersion = 2, 1 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := writeFile(t, st, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
			c.edit(f)
			_, code, eb := ts.commit(t, appendReq(t, "ds", 1, false, f))
			wantErr(t, code, eb, http.StatusBadRequest, coordapi.CodeInvalidTransaction)
			if !strings.Contains(eb.Message, c.want) {
				t.Fatalf("message %q does not name %q", eb.Message, c.want)
			}
		})
	}
	if v := latest(t, st).Manifest.GetVersion(); v != 1 {
		t.Fatalf("a lying description was committed (version %d)", v)
	}
}

// TestItem4_SymlinksOutOfTheRoot is issue 15 item 4.
func TestItem4_SymlinksOutOfTheRoot(t *testing.T) {
	ts := newTestServer(t, Config{})
	outside := t.TempDir()
	rootDir := filepath.Join(filepath.Dir(ts.Root.String()), filepath.Base(ts.Root.String()))
	if err := os.MkdirAll(rootDir, 0o777); err != nil {
		t.Fatal(err)
	}
	// A dataset directory that is a link out of the root.
	if err := os.Symlink(outside, filepath.Join(rootDir, "evil")); err != nil {
		t.Fatal(err)
	}
	code, eb := ts.call(t, http.MethodGet, "/v1/datasets/evil", nil, nil)
	wantErr(t, code, eb, http.StatusBadRequest, coordapi.CodeInvalidDatasetName)
	st := ts.createDataset(t, "ds")
	f := writeFile(t, st, 1)
	_, code, eb = ts.commit(t, appendReq(t, "evil", 1, false, f))
	wantErr(t, code, eb, http.StatusBadRequest, coordapi.CodeInvalidDatasetName)
	// A data file that is a link to a file outside.
	key := manifest.DataDir + "/" + f.GetFiles()[0].GetPath()
	real := filepath.Join(rootDir, "ds", filepath.FromSlash(key))
	moved := filepath.Join(outside, "x.lance")
	if err := os.Rename(real, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(moved, real); err != nil {
		t.Fatal(err)
	}
	_, code, eb = ts.commit(t, appendReq(t, "ds", 1, false, f))
	wantErr(t, code, eb, http.StatusBadRequest, coordapi.CodeInvalidTransaction)
	if v := latest(t, st).Manifest.GetVersion(); v != 1 {
		t.Fatalf("a symlinked data file was committed (version %d)", v)
	}
	// An index segment whose folder is a link out of the root.
	idx := &pb.IndexMetadata{Uuid: &pb.UUID{Uuid: []byte("0123456789abcdef")}, Name: "x_idx", Fields: []int32{0}, DatasetVersion: 1}
	u, err := manifest.IndexUUID(idx)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(rootDir, "ds", "_indices"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(rootDir, "ds", "_indices", u)); err != nil {
		t.Fatal(err)
	}
	_, code, eb = ts.commit(t, coordapi.CommitRequest{Dataset: "ds", ReadVersion: 1, Operation: coordapi.Operation{
		CreateIndex: &coordapi.CreateIndexOp{NewIndices: pjs(t, idx)}}})
	wantErr(t, code, eb, http.StatusBadRequest, coordapi.CodeInvalidTransaction)
	if v := latest(t, st).Manifest.GetVersion(); v != 1 {
		t.Fatalf("an index segment behind a symlink was committed (version %d)", v)
	}
}

// TestItem5_NoTableInsideATable is issue 15 item 5.
func TestItem5_NoTableInsideATable(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.createDataset(t, "ds")
	for _, name := range []string{"ds/data", "ds/inner", "ds/tree/b", "team/data"} {
		code, eb := ts.call(t, http.MethodGet, "/v1/datasets/"+strings.ReplaceAll(name, "/", "%2F"), nil, nil)
		wantErr(t, code, eb, http.StatusBadRequest, coordapi.CodeInvalidDatasetName)
	}
	// A dataset next to another is fine.
	ts.createDataset(t, "team/a")
	code, _ := ts.call(t, http.MethodGet, "/v1/datasets/team%2Fa", nil, nil)
	if code != http.StatusOK {
		t.Fatalf("team/a: %d", code)
	}
}

// TestItem6_ClientMistakesAre4xx is issue 15 item 6: these were 502
// storage_error, which tells clients to retry.
func TestItem6_ClientMistakesAre4xx(t *testing.T) {
	ts := newTestServer(t, Config{})
	st := ts.createDataset(t, "ds")
	// A garbage file in data/.
	if err := st.Put(context.Background(), manifest.DataDir+"/garbage.lance", []byte("not a lance file at all, just text")); err != nil {
		t.Fatal(err)
	}
	g := &pb.DataFragment{PhysicalRows: 1, Files: []*pb.DataFile{{Path: "garbage.lance", Fields: []int32{0}, ColumnIndices: []int32{0}, FileMinorVersion: 3}}}
	_, code, eb := ts.commit(t, appendReq(t, "ds", 1, false, g))
	wantErr(t, code, eb, http.StatusBadRequest, coordapi.CodeInvalidTransaction)
	// read_version 2^63.
	_, code, eb = ts.commit(t, appendReq(t, "ds", 1<<63, false, writeFile(t, st, 1)))
	if code < 400 || code >= 500 {
		t.Fatalf("read_version 2^63: %d %+v", code, eb)
	}
	// An over-long tag name.
	code, eb = ts.call(t, http.MethodPost, "/v1/datasets/ds/tags", coordapi.CreateTagRequest{Name: strings.Repeat("t", 5000)}, nil)
	if code < 400 || code >= 500 {
		t.Fatalf("long tag name: %d %+v", code, eb)
	}
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestItem17_ActivationIsLogged: the coordinator logs an activating
// commit as such (issue 15 item 17), once.
func TestItem17_ActivationIsLogged(t *testing.T) {
	var logs syncBuffer
	ts := newTestServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ts.createDataset(t, "ds")
	ts.ok(t, http.MethodPost, "/v1/datasets/ds/seeds/enable", nil, nil)
	ts.ok(t, http.MethodPost, "/v1/datasets/ds/seeds/enable", nil, nil)
	if n := strings.Count(logs.String(), "activated FLAG_ZONE_WRITE_SEEDS"); n != 1 {
		t.Fatalf("%d activation log lines:\n%s", n, logs.String())
	}
}

// TestItem10_SummaryRowSumIsChecked: two fragments of 2^64-1 rows made the
// summary's physical_rows wrap around (issue 15 item 10); now the summary
// is refused as a corrupt manifest.
func TestItem10_SummaryRowSumIsChecked(t *testing.T) {
	ts := newTestServer(t, Config{})
	st := ts.createDataset(t, "ds")
	m := proto.Clone(latest(t, st).Manifest).(*pb.Manifest)
	m.Version = 2
	second := proto.Clone(m.Fragments[0]).(*pb.DataFragment)
	second.Id = 1
	m.Fragments = append(m.Fragments, second)
	m.Fragments[0].PhysicalRows, m.Fragments[1].PhysicalRows = 1<<64-1, 1<<64-1
	mx := uint32(1)
	m.MaxFragmentId = &mx
	data, err := manifest.EncodePrelude(nil, m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(context.Background(), manifest.ManifestPath(manifest.V2, 2), data); err != nil {
		t.Fatal(err)
	}
	var sum coordapi.DatasetSummary
	code, eb := ts.call(t, http.MethodGet, "/v1/datasets/ds", nil, &sum)
	if code == http.StatusOK || eb == nil || !strings.Contains(eb.Message, "overflow") {
		t.Fatalf("got %d %+v (physical_rows %d)", code, eb, sum.PhysicalRows)
	}
}
