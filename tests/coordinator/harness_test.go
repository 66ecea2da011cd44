// Package coordinator_test holds the cross-package suites of the commit
// coordinator: several coordinators and direct library writers on one
// dataset, the 32-client load test, and the throughput benchmark against
// direct library commits. Everything runs on loopback with local
// directories.
package coordinator_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/coordinator"
	coordclient "github.com/lancekeeper/lancekeeper/coordinator/client"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

// server is a coordinator serving a root on a loopback port.
type server struct {
	*coordinator.Server
	URL  string
	stop func() error
}

// startServer serves root (a local directory) on 127.0.0.1 until the
// returned server is stopped (at cleanup at the latest).
func startServer(tb testing.TB, root string, cfg coordinator.Config) *server {
	tb.Helper()
	cfg.Roots = []coordinator.Root{{URL: root}}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s, err := coordinator.New(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	var once sync.Once
	var serr error
	stop := func() error {
		once.Do(func() { cancel(); serr = <-done; s.Close() })
		return serr
	}
	tb.Cleanup(func() { _ = stop() })
	return &server{Server: s, URL: "http://" + ln.Addr().String(), stop: stop}
}

func client(tb testing.TB, url string) *coordclient.Client {
	tb.Helper()
	c, err := coordclient.New(url, coordclient.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func openStore(tb testing.TB, url string) *store.Store {
	tb.Helper()
	st, err := store.Open(context.Background(), url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

var schema = arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)

func fields() []*pb.Field {
	return []*pb.Field{{Name: "x", Id: 0, ParentId: -1, LogicalType: "int64", Nullable: true, Encoding: pb.Encoding_PLAIN}}
}

// writeDataFile writes a one-row data file (x = v) into the dataset st, as
// a client does before asking for the commit, and returns its fragment.
func writeDataFile(ctx context.Context, st commit.Store, v int64) (*pb.DataFragment, error) {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.Append(v)
	arr := b.NewArray()
	defer arr.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{arr}, 1)
	defer rec.Release()
	path := manifest.DataDir + "/" + commit.NewDataFileName()
	sw, err := st.NewWriter(ctx, path)
	if err != nil {
		return nil, err
	}
	w, err := datafile.NewWriter(sw, schema, datafile.WriterOptions{FieldIDs: []int32{0}})
	if err != nil {
		_ = sw.Abort()
		return nil, err
	}
	if err := w.Write(rec); err != nil {
		_ = sw.Abort()
		return nil, err
	}
	r, err := w.Close()
	if err != nil {
		_ = sw.Abort()
		return nil, err
	}
	if err := sw.Close(); err != nil {
		return nil, err
	}
	return &pb.DataFragment{PhysicalRows: r.NumRows, Files: []*pb.DataFile{{
		Path: strings.TrimPrefix(path, manifest.DataDir+"/"), Fields: r.Fields, ColumnIndices: r.ColumnIndices,
		FileMajorVersion: r.FileMajorVersion, FileMinorVersion: r.FileMinorVersion, FileSizeBytes: r.FileSizeBytes,
	}}}, nil
}

// createDataset creates the dataset at st with one fragment.
func createDataset(tb testing.TB, st commit.Store) {
	tb.Helper()
	f, err := writeDataFile(context.Background(), st, -1)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := commit.Commit(context.Background(), st, commit.NewOverwrite(0, commit.OverwriteSpec{Fragments: []*pb.DataFragment{f}, Schema: fields()}), commit.Options{}); err != nil {
		tb.Fatal(err)
	}
}

// ack is an acknowledged append: the version and fragment id the writer
// was told.
type ack struct {
	Version  uint64
	Fragment uint64
}

// ledger collects acknowledgements and failures from concurrent writers.
type ledger struct {
	mu    sync.Mutex
	acks  map[string]ack // data file path → ack
	fails []string
	// unknown counts failures whose outcome the writer cannot know (the
	// commit may have landed).
	unknown int
}

func newLedger() *ledger { return &ledger{acks: map[string]ack{}} }

func (l *ledger) ack(path string, a ack) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if prev, dup := l.acks[path]; dup {
		return fmt.Errorf("data file %s acknowledged twice (%+v, %+v)", path, prev, a)
	}
	l.acks[path] = a
	return nil
}

func (l *ledger) fail(path string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fails = append(l.fails, fmt.Sprintf("%s: %v", path, err))
	if errors.Is(err, commit.ErrCommitOutcomeUnknown) || !isDefiniteFailure(err) {
		l.unknown++
	}
}

// isDefiniteFailure: errors after which the commit certainly did not land.
func isDefiniteFailure(err error) bool {
	var ce *coordclient.Error
	if errors.As(err, &ce) {
		return ce.Body.Code != "commit_outcome_unknown" && ce.Status < 500 || ce.Status == 503
	}
	return errors.Is(err, commit.ErrConflict) || errors.Is(err, commit.ErrInvalidTransaction)
}

// verify checks the dataset against the ledger: versions are contiguous
// from 1; every acknowledged data file appears exactly once in the latest
// manifest, under the acknowledged fragment id, and in the transaction of
// the acknowledged version; no data file and no fragment id appears twice;
// and, when no outcome is unknown, nothing else was committed.
func verify(tb testing.TB, st commit.Store, l *ledger, initial int) (versions int) {
	tb.Helper()
	ctx := context.Background()
	vs, err := manifest.ListVersions(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		tb.Fatal(err)
	}
	for i, v := range vs {
		if v.Version != uint64(i+1) {
			tb.Fatalf("versions are not contiguous: position %d holds version %d", i+1, v.Version)
		}
	}
	head, err := manifest.ReadVersion(ctx, st.Bucket(), st.KeyPrefix(), uint64(len(vs)))
	if err != nil {
		tb.Fatal(err)
	}
	byPath := map[string]uint64{}
	ids := map[uint64]bool{}
	for _, f := range head.Manifest.GetFragments() {
		p := f.GetFiles()[0].GetPath()
		if _, dup := byPath[p]; dup {
			tb.Fatalf("data file %s committed twice", p)
		}
		if ids[f.GetId()] {
			tb.Fatalf("fragment id %d used twice", f.GetId())
		}
		byPath[p], ids[f.GetId()] = f.GetId(), true
	}
	// Which version committed which data file (every version's transaction).
	committedAt := map[string]uint64{}
	for _, v := range vs[1:] {
		f, err := manifest.ReadInfo(ctx, st.Bucket(), st.KeyPrefix(), v)
		if err != nil {
			tb.Fatal(err)
		}
		for _, fr := range f.Transaction.GetAppend().GetFragments() {
			p := fr.GetFiles()[0].GetPath()
			if prev, dup := committedAt[p]; dup {
				tb.Fatalf("data file %s committed by versions %d and %d", p, prev, v.Version)
			}
			committedAt[p] = v.Version
		}
	}
	for p, a := range l.acks {
		id, ok := byPath[p]
		if !ok {
			tb.Fatalf("acknowledged data file %s (version %d) is lost", p, a.Version)
		}
		if id != a.Fragment {
			tb.Fatalf("data file %s: fragment id %d, acknowledged as %d", p, id, a.Fragment)
		}
		if committedAt[p] != a.Version {
			tb.Fatalf("data file %s: committed at version %d, acknowledged as %d", p, committedAt[p], a.Version)
		}
	}
	if extra := len(byPath) - initial - len(l.acks); extra != 0 && (l.unknown == 0 || extra > l.unknown || extra < 0) {
		tb.Fatalf("%d fragments = %d initial + %d acknowledged + %d unexplained (%d outcomes unknown)", len(byPath), initial, len(l.acks), extra, l.unknown)
	}
	return len(vs)
}

// envInt reads a positive integer from the environment.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// metric sums a metric family of a server's registry: counter and gauge
// values, or the sample count (count=true) or sum of a histogram.
func metric(tb testing.TB, s *coordinator.Server, name string, count bool) float64 {
	tb.Helper()
	mfs, err := s.Registry().Gather()
	if err != nil {
		tb.Fatal(err)
	}
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			switch {
			case m.Counter != nil:
				total += m.GetCounter().GetValue()
			case m.Gauge != nil:
				total += m.GetGauge().GetValue()
			case m.Histogram != nil && count:
				total += float64(m.GetHistogram().GetSampleCount())
			case m.Histogram != nil:
				total += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return total
}
