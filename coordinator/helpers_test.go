package coordinator

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/commit"
	coordapi "github.com/lancekeeper/lancekeeper/coordinator/api"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

// quietLogger discards logs (tests that check logs use their own).
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testServer is a coordinator on a loopback httptest server with a local
// root in a temporary directory.
type testServer struct {
	*Server
	URL  string
	Root *store.Store
	http *httptest.Server
}

func newTestServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	if len(cfg.Roots) == 0 {
		cfg.Roots = []Root{{URL: t.TempDir() + "/root"}}
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() { hs.Close(); s.Close() })
	root, err := s.RootStore("")
	if err != nil {
		t.Fatal(err)
	}
	return &testServer{Server: s, URL: hs.URL, Root: root, http: hs}
}

func (ts *testServer) dataset(t testing.TB, name string) *store.Store {
	t.Helper()
	st, err := ts.Root.Sub(name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

var oneColumn = arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)

// writeFile writes a data file of one int64 column "x" (field id 0) with
// the given values into st and returns its fragment (id unassigned).
func writeFile(t testing.TB, st commit.Store, values ...int64) *pb.DataFragment {
	t.Helper()
	return writeFileOpts(t, st, datafile.WriterOptions{FieldIDs: []int32{0}}, values...)
}

func writeFileOpts(t testing.TB, st commit.Store, wopts datafile.WriterOptions, values ...int64) *pb.DataFragment {
	t.Helper()
	ctx := context.Background()
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues(values, nil)
	arr := b.NewArray()
	defer arr.Release()
	rec := array.NewRecordBatch(oneColumn, []arrow.Array{arr}, int64(len(values)))
	defer rec.Release()
	path := manifest.DataDir + "/" + commit.NewDataFileName()
	sw, err := st.NewWriter(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := datafile.NewWriter(sw, oneColumn, wopts)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	r, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	return &pb.DataFragment{PhysicalRows: r.NumRows, Files: []*pb.DataFile{{
		Path: strings.TrimPrefix(path, manifest.DataDir+"/"), Fields: r.Fields, ColumnIndices: r.ColumnIndices,
		FileMajorVersion: r.FileMajorVersion, FileMinorVersion: r.FileMinorVersion, FileSizeBytes: r.FileSizeBytes,
	}}}
}

func oneColumnFields() []*pb.Field {
	return []*pb.Field{{Name: "x", Id: 0, ParentId: -1, LogicalType: "int64", Nullable: true, Encoding: pb.Encoding_PLAIN}}
}

// createDataset creates dataset name with one fragment through the library.
func (ts *testServer) createDataset(t testing.TB, name string) *store.Store {
	t.Helper()
	st := ts.dataset(t, name)
	f := writeFile(t, st, 1, 2, 3)
	if _, err := commit.Commit(context.Background(), st, commit.NewOverwrite(0, commit.OverwriteSpec{Fragments: []*pb.DataFragment{f}, Schema: oneColumnFields()}), commit.Options{}); err != nil {
		t.Fatal(err)
	}
	return st
}

func rawFrags(t testing.TB, frags ...*pb.DataFragment) []json.RawMessage { return pjs(t, frags...) }

// pjs encodes protobuf messages as the API's protojson values.
func pjs[M proto.Message](t testing.TB, msgs ...M) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for _, m := range msgs {
		b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// writeSeededFile writes a one-column data file with a v1 zone write seed.
func writeSeededFile(t testing.TB, st commit.Store) *pb.DataFragment {
	t.Helper()
	return writeFileOpts(t, st, datafile.WriterOptions{FieldIDs: []int32{0}, SeedAllColumns: true}, 1, 2, 3)
}

func appendReq(t testing.TB, dataset string, read uint64, batch bool, frags ...*pb.DataFragment) coordapi.CommitRequest {
	return coordapi.CommitRequest{Dataset: dataset, ReadVersion: read, AllowBatching: batch,
		Operation: coordapi.Operation{Append: &coordapi.AppendOp{Fragments: rawFrags(t, frags...)}}}
}

// call sends a request and decodes the answer into out (2xx) or returns the
// error body.
func (ts *testServer) call(t testing.TB, method, path string, body any, out any, hdr ...string) (int, *coordapi.ErrorBody) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, ts.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode >= 300 {
		var er coordapi.ErrorResponse
		if err := json.Unmarshal(data, &er); err != nil {
			t.Fatalf("%s %s: %d with a non-JSON body %q", method, path, resp.StatusCode, data)
		}
		return resp.StatusCode, &er.Error
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decode %q: %v", method, path, data, err)
		}
	}
	return resp.StatusCode, nil
}

func (ts *testServer) commit(t testing.TB, req coordapi.CommitRequest) (*coordapi.CommitResponse, int, *coordapi.ErrorBody) {
	t.Helper()
	out := &coordapi.CommitResponse{}
	code, eb := ts.call(t, http.MethodPost, coordapi.PathCommit, req, out)
	return out, code, eb
}

func mustOK(t testing.TB, code int, eb *coordapi.ErrorBody) {
	t.Helper()
	if eb != nil || code >= 300 {
		t.Fatalf("status %d: %+v", code, eb)
	}
}

func wantErr(t testing.TB, code int, eb *coordapi.ErrorBody, wantStatus int, wantCode string) {
	t.Helper()
	if code != wantStatus || eb == nil || eb.Code != wantCode {
		t.Fatalf("got %d %+v, want %d %s", code, eb, wantStatus, wantCode)
	}
}

func latest(t testing.TB, st commit.Store) *manifest.File {
	t.Helper()
	f, _, err := manifest.LoadLatest(context.Background(), st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// metricValue sums the samples of a metric family (counter, gauge, or the
// sample count of a histogram) whose labels include want.
func metricValue(t testing.TB, s *Server, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := s.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				total += m.GetCounter().GetValue()
			case m.Gauge != nil:
				total += m.GetGauge().GetValue()
			case m.Histogram != nil:
				total += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return total
}

// ok is call that fails the test on an error answer.
func (ts *testServer) ok(t testing.TB, method, path string, body any, out any) {
	t.Helper()
	code, eb := ts.call(t, method, path, body, out)
	mustOK(t, code, eb)
}

func readVersionFile(t testing.TB, st commit.Store, v uint64) *manifest.File {
	t.Helper()
	f, err := manifest.ReadVersion(context.Background(), st.Bucket(), st.KeyPrefix(), v)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
