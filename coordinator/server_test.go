package coordinator

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/lancekeeper/lancekeeper/commit"
	coordapi "github.com/lancekeeper/lancekeeper/coordinator/api"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

func dsPath(name, suffix string) string { return "/v1/datasets/" + url.PathEscape(name) + suffix }

// TestAPI_CreateAppendReadTags walks the API: create by Overwrite, append,
// summary, versions (paged), tags, and the explicit seed activation.
func TestAPI_CreateAppendReadTags(t *testing.T) {
	ts := newTestServer(t, Config{})
	const name = "team/events.lance"
	st := ts.dataset(t, name)

	// Create through the API.
	f0 := writeFile(t, st, 1, 2, 3)
	schema := pjs(t, oneColumnFields()...)
	res, code, eb := ts.commit(t, coordapi.CommitRequest{Dataset: name, Operation: coordapi.Operation{
		Overwrite: &coordapi.OverwriteOp{Fragments: rawFrags(t, f0), Schema: schema, ConfigUpserts: map[string]string{"k": "v"}}}})
	mustOK(t, code, eb)
	if res.Version != 1 || len(res.FragmentIDs) != 1 || res.FragmentIDs[0] != 0 || res.BatchSize != 1 {
		t.Fatalf("create: %+v", res)
	}
	// Creating again is dataset_exists.
	_, code, eb = ts.commit(t, coordapi.CommitRequest{Dataset: name, Operation: coordapi.Operation{
		Overwrite: &coordapi.OverwriteOp{Fragments: rawFrags(t, f0), Schema: schema}}})
	wantErr(t, code, eb, http.StatusConflict, coordapi.CodeDatasetExists)

	// Append two fragments.
	res, code, eb = ts.commit(t, appendReq(t, name, 1, false, writeFile(t, st, 4), writeFile(t, st, 5, 6)))
	mustOK(t, code, eb)
	if res.Version != 2 || len(res.FragmentIDs) != 2 || res.FragmentIDs[0] != 1 || res.FragmentIDs[1] != 2 || res.ReadVersion != 1 {
		t.Fatalf("append: %+v", res)
	}

	var sum coordapi.DatasetSummary
	ts.ok(t, http.MethodGet, dsPath(name, ""), nil, &sum)
	if sum.Version != 2 || sum.Fragments != 3 || sum.PhysicalRows != 6 || sum.Config["k"] != "v" || len(sum.Fields) != 1 ||
		sum.Fields[0].Name != "x" || sum.DataStorageVersion != "2.0" || sum.ZoneWriteSeeds || sum.Dataset != name || sum.Root != DefaultRootName {
		t.Fatalf("summary: %+v", sum)
	}

	var vs coordapi.VersionsResponse
	ts.ok(t, http.MethodGet, dsPath(name, "/versions?limit=1"), nil, &vs)
	if len(vs.Versions) != 1 || vs.Versions[0].Version != 1 || vs.NextAfter != 1 {
		t.Fatalf("versions page 1: %+v", vs)
	}
	vs = coordapi.VersionsResponse{}
	ts.ok(t, http.MethodGet, dsPath(name, "/versions?after=1"), nil, &vs)
	if len(vs.Versions) != 1 || vs.Versions[0].Version != 2 || vs.NextAfter != 0 {
		t.Fatalf("versions page 2: %+v", vs)
	}

	var tag coordapi.Tag
	code, eb = ts.call(t, http.MethodPost, dsPath(name, "/tags"), coordapi.CreateTagRequest{Name: "v1", Version: 1, Metadata: map[string]string{"a": "b"}}, &tag)
	if code != http.StatusCreated || tag.Version != 1 || tag.Metadata["a"] != "b" || tag.CreatedAt == nil {
		t.Fatalf("create tag: %d %+v %+v", code, eb, tag)
	}
	code, eb = ts.call(t, http.MethodPost, dsPath(name, "/tags"), coordapi.CreateTagRequest{Name: "v1"}, nil)
	wantErr(t, code, eb, http.StatusConflict, coordapi.CodeTagExists)
	code, eb = ts.call(t, http.MethodPost, dsPath(name, "/tags"), coordapi.CreateTagRequest{Name: "bad/../name"}, nil)
	wantErr(t, code, eb, http.StatusBadRequest, coordapi.CodeBadRequest)
	ts.ok(t, http.MethodPost, dsPath(name, "/tags"), coordapi.CreateTagRequest{Name: "head"}, &tag)
	if tag.Version != 2 {
		t.Fatalf("tag of latest: %+v", tag)
	}
	var tags coordapi.TagsResponse
	ts.ok(t, http.MethodGet, dsPath(name, "/tags"), nil, &tags)
	if len(tags.Tags) != 2 || tags.Tags[0].Name != "head" || tags.Tags[1].Name != "v1" {
		t.Fatalf("tags: %+v", tags)
	}
	code, _ = ts.call(t, http.MethodDelete, dsPath(name, "/tags/v1"), nil, nil)
	if code != http.StatusNoContent {
		t.Fatalf("delete tag: %d", code)
	}
	code, eb = ts.call(t, http.MethodDelete, dsPath(name, "/tags/v1"), nil, nil)
	wantErr(t, code, eb, http.StatusNotFound, coordapi.CodeNotFound)

	// R56: the explicit activation sets both bits and changes nothing else;
	// a second activation writes nothing.
	var en coordapi.CommitResponse
	ts.ok(t, http.MethodPost, dsPath(name, "/seeds/enable"), nil, &en)
	if en.Version != 3 || !en.ZoneWriteSeeds || en.AlreadyEnabled || en.ReaderFeatureFlags&flags.ZoneWriteSeeds == 0 || en.WriterFeatureFlags&flags.ZoneWriteSeeds == 0 {
		t.Fatalf("enable: %+v", en)
	}
	if got := latest(t, st).Manifest; len(got.GetFragments()) != 3 || !commit.HasZoneWriteSeeds(got) {
		t.Fatalf("after enable: %d fragments, seeds %v", len(got.GetFragments()), commit.HasZoneWriteSeeds(got))
	}
	ts.ok(t, http.MethodPost, dsPath(name, "/seeds/enable"), nil, &en)
	if !en.AlreadyEnabled || en.Version != 3 {
		t.Fatalf("second enable: %+v", en)
	}
	// R57: a later append keeps the pair.
	res, code, eb = ts.commit(t, appendReq(t, name, 3, true, writeFile(t, st, 7)))
	mustOK(t, code, eb)
	if !res.ZoneWriteSeeds || res.Version != 4 {
		t.Fatalf("append after enable: %+v", res)
	}

	var roots coordapi.RootsResponse
	ts.ok(t, http.MethodGet, coordapi.PathRoots, nil, &roots)
	if len(roots.Roots) != 1 || !roots.Roots[0].Default || !roots.Roots[0].AtomicCreate || !strings.HasSuffix(roots.Roots[0].URL, "/root") {
		t.Fatalf("roots: %+v", roots)
	}
	var h coordapi.Health
	ts.ok(t, http.MethodGet, coordapi.PathHealth, nil, &h)
	if h.Status != "ok" {
		t.Fatalf("health %+v", h)
	}
}

// TestAPI_DeleteUpdateConfigDropIndex: the other operations of a commit.
func TestAPI_DeleteUpdateConfigDropIndex(t *testing.T) {
	ts := newTestServer(t, Config{})
	st := ts.createDataset(t, "d")

	// Delete rows 0 and 2 of fragment 0 (3 rows): a deletion file.
	res, code, eb := ts.commit(t, coordapi.CommitRequest{Dataset: "d", ReadVersion: 1, Operation: coordapi.Operation{
		Delete: &coordapi.DeleteOp{Fragments: []coordapi.FragmentDeletion{{ID: 0, Rows: []uint32{0}, Ranges: [][2]uint64{{2, 3}}}}, Predicate: "x != 2"}}})
	mustOK(t, code, eb)
	frag := latest(t, st).Manifest.GetFragments()[0]
	if res.Version != 2 || frag.GetDeletionFile().GetNumDeletedRows() != 2 {
		t.Fatalf("delete: %+v, fragment %v", res, frag)
	}
	// Deleting a row beyond the fragment is invalid_transaction.
	_, code, eb = ts.commit(t, coordapi.CommitRequest{Dataset: "d", ReadVersion: 2, Operation: coordapi.Operation{
		Delete: &coordapi.DeleteOp{Fragments: []coordapi.FragmentDeletion{{ID: 0, Rows: []uint32{9}}}}}})
	wantErr(t, code, eb, http.StatusBadRequest, coordapi.CodeInvalidTransaction)

	// UpdateConfig: set and delete keys.
	v := "1"
	_, code, eb = ts.commit(t, coordapi.CommitRequest{Dataset: "d", ReadVersion: 2, Operation: coordapi.Operation{
		UpdateConfig: &coordapi.UpdateConfigOp{Config: map[string]*string{"a": &v, "b": &v}}}})
	mustOK(t, code, eb)
	_, code, eb = ts.commit(t, coordapi.CommitRequest{Dataset: "d", ReadVersion: 3, Operation: coordapi.Operation{
		UpdateConfig: &coordapi.UpdateConfigOp{Config: map[string]*string{"b": nil}}}})
	mustOK(t, code, eb)
	if cfg := latest(t, st).Manifest.GetConfig(); cfg["a"] != "1" || cfg["b"] != "" || len(cfg) != 1 {
		t.Fatalf("config %v", cfg)
	}

	// An index added through create_index, then dropped by name.
	idx := &pb.IndexMetadata{Uuid: &pb.UUID{Uuid: []byte("0123456789abcdef")}, Name: "x_idx", Fields: []int32{0}, DatasetVersion: 4}
	_, code, eb = ts.commit(t, coordapi.CommitRequest{Dataset: "d", ReadVersion: 4, Operation: coordapi.Operation{
		CreateIndex: &coordapi.CreateIndexOp{NewIndices: pjs(t, idx)}}})
	mustOK(t, code, eb)
	if n := len(latest(t, st).Indices()); n != 1 {
		t.Fatalf("%d indices after create_index", n)
	}
	_, code, eb = ts.commit(t, coordapi.CommitRequest{Dataset: "d", ReadVersion: 5, Operation: coordapi.Operation{DropIndex: &coordapi.DropIndexOp{Name: "nope"}}})
	wantErr(t, code, eb, http.StatusBadRequest, coordapi.CodeInvalidTransaction)
	res, code, eb = ts.commit(t, coordapi.CommitRequest{Dataset: "d", ReadVersion: 5, Operation: coordapi.Operation{DropIndex: &coordapi.DropIndexOp{Name: "x_idx"}}})
	mustOK(t, code, eb)
	if n := len(latest(t, st).Indices()); n != 0 || res.Version != 6 {
		t.Fatalf("%d indices after drop_index (version %d)", n, res.Version)
	}

	// Restore and reserve_fragments.
	res, code, eb = ts.commit(t, coordapi.CommitRequest{Dataset: "d", ReadVersion: 6, Operation: coordapi.Operation{ReserveFragments: &coordapi.ReserveFragmentsOp{Count: 5}}})
	mustOK(t, code, eb)
	if res.ReservedFirst != 1 || res.ReservedLast != 5 {
		t.Fatalf("reserve: %+v", res)
	}
	res, code, eb = ts.commit(t, coordapi.CommitRequest{Dataset: "d", ReadVersion: 7, Operation: coordapi.Operation{Restore: &coordapi.RestoreOp{Version: 1}}})
	mustOK(t, code, eb)
	if m := latest(t, st).Manifest; res.Version != 8 || m.GetFragments()[0].GetDeletionFile() != nil {
		t.Fatalf("restore: %+v", res)
	}

	// Properties ride on the transaction.
	res, code, eb = ts.commit(t, coordapi.CommitRequest{Dataset: "d", ReadVersion: 8, Properties: map[string]string{"__lance_commit_message": "hi"},
		Operation: coordapi.Operation{Append: &coordapi.AppendOp{Fragments: rawFrags(t, writeFile(t, st, 9))}}, AllowBatching: true})
	mustOK(t, code, eb)
	if got := latest(t, st).Transaction.GetTransactionProperties()["__lance_commit_message"]; got != "hi" {
		t.Fatalf("commit message %q", got)
	}
}

// TestAPI_Errors: each failure has its status and code.
func TestAPI_Errors(t *testing.T) {
	ts := newTestServer(t, Config{})
	st := ts.createDataset(t, "d")
	ghost := writeFile(t, st, 1)
	ghost.Files[0].Path = "not-written.lance"
	badField := writeFile(t, st, 1)
	badField.Files[0].Fields = []int32{42}
	cases := []struct {
		name   string
		req    coordapi.CommitRequest
		status int
		code   string
	}{
		{"missing dataset", appendReq(t, "nope", 1, false, writeFile(t, ts.dataset(t, "nope"), 1)), 404, coordapi.CodeDatasetNotFound},
		{"read version 0 append", appendReq(t, "d", 0, false, writeFile(t, st, 1)), 400, coordapi.CodeBadRequest},
		{"no operation", coordapi.CommitRequest{Dataset: "d", ReadVersion: 1}, 400, coordapi.CodeBadRequest},
		{"two operations", coordapi.CommitRequest{Dataset: "d", ReadVersion: 1, Operation: coordapi.Operation{
			Restore: &coordapi.RestoreOp{Version: 1}, ReserveFragments: &coordapi.ReserveFragmentsOp{Count: 1}}}, 400, coordapi.CodeBadRequest},
		{"data file elsewhere", appendReq(t, "d", 1, false, ghost), 400, coordapi.CodeDataFileNotFound},
		{"unknown field id", appendReq(t, "d", 1, false, badField), 400, coordapi.CodeInvalidTransaction},
		{"requirement", func() coordapi.CommitRequest {
			r := appendReq(t, "d", 1, false, writeFile(t, st, 1))
			r.Requirements = []coordapi.Requirement{{Type: coordapi.RequireLatestVersion, Version: 7}}
			return r
		}(), 409, coordapi.CodeRequirementFailed},
		{"unknown requirement", func() coordapi.CommitRequest {
			r := appendReq(t, "d", 1, false, writeFile(t, st, 1))
			r.Requirements = []coordapi.Requirement{{Type: "vibes"}}
			return r
		}(), 400, coordapi.CodeBadRequest},
		{"unknown root", func() coordapi.CommitRequest {
			r := appendReq(t, "d", 1, false, writeFile(t, st, 1))
			r.Root = "other"
			return r
		}(), 400, coordapi.CodeUnknownRoot},
		{"empty update_config", coordapi.CommitRequest{Dataset: "d", ReadVersion: 1, Operation: coordapi.Operation{UpdateConfig: &coordapi.UpdateConfigOp{}}}, 400, coordapi.CodeBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, code, eb := ts.commit(t, c.req)
			wantErr(t, code, eb, c.status, c.code)
		})
	}
	// Overwrite after the read version makes a concurrent append conflict.
	ts.ok(t, http.MethodPost, coordapi.PathCommit, coordapi.CommitRequest{Dataset: "d", ReadVersion: 1, Operation: coordapi.Operation{
		Overwrite: &coordapi.OverwriteOp{Fragments: rawFrags(t, writeFile(t, st, 1)), Schema: pjs(t, oneColumnFields()...)}}}, nil)
	_, code, eb := ts.commit(t, appendReq(t, "d", 1, false, writeFile(t, st, 1)))
	wantErr(t, code, eb, http.StatusConflict, coordapi.CodeConflict)
	if eb.Conflict == nil || eb.Conflict.ConcurrentOperation != "Overwrite" || eb.Conflict.Version != 2 || eb.Conflict.Retryable {
		t.Fatalf("conflict body %+v", eb.Conflict)
	}
	if got := metricValue(t, ts.Server, "lancekeeper_coordinator_conflicts_total", map[string]string{"op": "append", "kind": "incompatible"}); got != 1 {
		t.Fatalf("conflicts metric %v", got)
	}
	// Malformed bodies.
	code, eb = ts.call(t, http.MethodPost, coordapi.PathCommit, `{"dataset":"d","read_version":1,"operation":{"restore":{"version":1}},"extra":1}`, nil)
	wantErr(t, code, eb, 400, coordapi.CodeBadRequest)
	code, eb = ts.call(t, http.MethodPost, coordapi.PathCommit, `{"dataset":"d"} {}`, nil)
	wantErr(t, code, eb, 400, coordapi.CodeBadRequest)
	code, eb = ts.call(t, http.MethodPost, coordapi.PathCommit, `{"dataset":"d","read_version":1,"operation":{"append":{"fragments":[{"files":"x"}]}}}`, nil)
	wantErr(t, code, eb, 400, coordapi.CodeBadRequest)
	code, eb = ts.call(t, http.MethodPost, coordapi.PathCommit, "dataset=d", nil, "Content-Type", "application/x-www-form-urlencoded")
	wantErr(t, code, eb, http.StatusUnsupportedMediaType, coordapi.CodeUnsupportedMedia)
	code, eb = ts.call(t, http.MethodGet, "/v1/nothing", nil, nil)
	wantErr(t, code, eb, 404, coordapi.CodeNotFound)
	code, eb = ts.call(t, http.MethodGet, dsPath("nope", ""), nil, nil)
	wantErr(t, code, eb, 404, coordapi.CodeDatasetNotFound)
}

// TestR54_CoordinatorInspectsSeedsItself: a data file with a v1 seed makes
// the commit set FLAG_ZONE_WRITE_SEEDS only with the opt-in; without it the
// commit is refused (R56), whatever the client claims.
func TestR54_CoordinatorInspectsSeedsItself(t *testing.T) {
	ts := newTestServer(t, Config{})
	st := ts.createDataset(t, "d")
	seeded := writeSeededFile(t, st)
	_, code, eb := ts.commit(t, appendReq(t, "d", 1, true, seeded))
	wantErr(t, code, eb, http.StatusBadRequest, coordapi.CodeSeedsNotEnabled)
	if v := latest(t, st).Manifest.GetVersion(); v != 1 {
		t.Fatalf("refused commit wrote version %d", v)
	}
	req := appendReq(t, "d", 1, true, seeded)
	req.EnableZoneWriteSeeds = true
	res, code, eb := ts.commit(t, req)
	mustOK(t, code, eb)
	if !res.ZoneWriteSeeds || res.ReaderFeatureFlags&flags.ZoneWriteSeeds == 0 || res.WriterFeatureFlags&flags.ZoneWriteSeeds == 0 {
		t.Fatalf("R54: %+v", res)
	}
}

func TestR56_EnableSeedsExpectedVersion(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.createDataset(t, "d")
	code, eb := ts.call(t, http.MethodPost, dsPath("d", "/seeds/enable"), coordapi.EnableSeedsRequest{ExpectedVersion: 5}, nil)
	wantErr(t, code, eb, http.StatusConflict, coordapi.CodeRequirementFailed)
	if eb.Requirement == nil || eb.Requirement.Latest != 1 {
		t.Fatalf("requirement body %+v", eb.Requirement)
	}
	var res coordapi.CommitResponse
	ts.ok(t, http.MethodPost, dsPath("d", "/seeds/enable"), coordapi.EnableSeedsRequest{ExpectedVersion: 1}, &res)
	if res.Version != 2 || !res.ZoneWriteSeeds {
		t.Fatalf("%+v", res)
	}
}

// TestDataFilesAbsentRequirement: resending an acknowledged append with
// data_files_absent is refused instead of duplicating the fragment.
func TestDataFilesAbsentRequirement(t *testing.T) {
	ts := newTestServer(t, Config{})
	st := ts.createDataset(t, "d")
	req := appendReq(t, "d", 1, true, writeFile(t, st, 5))
	req.Requirements = []coordapi.Requirement{{Type: coordapi.RequireDataFilesAbsent}}
	_, code, eb := ts.commit(t, req)
	mustOK(t, code, eb)
	_, code, eb = ts.commit(t, req)
	wantErr(t, code, eb, http.StatusConflict, coordapi.CodeRequirementFailed)
	if n := len(latest(t, st).Manifest.GetFragments()); n != 2 {
		t.Fatalf("%d fragments, want 2", n)
	}
}

func TestMultipleRoots(t *testing.T) {
	dir := t.TempDir()
	ts := newTestServer(t, Config{Roots: []Root{{Name: "a", URL: dir + "/a"}, {Name: "b", URL: dir + "/b"}}})
	stB, err := ts.RootStore("b")
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := stB.Sub("d")
	f := writeFile(t, sub, 1)
	_, err = commit.Commit(context.Background(), sub, commit.NewOverwrite(0, commit.OverwriteSpec{Fragments: []*pb.DataFragment{f}, Schema: oneColumnFields()}), commit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	code, eb := ts.call(t, http.MethodGet, dsPath("d", ""), nil, nil)
	wantErr(t, code, eb, 404, coordapi.CodeDatasetNotFound)
	var sum coordapi.DatasetSummary
	ts.ok(t, http.MethodGet, dsPath("d", "?root=b"), nil, &sum)
	if sum.Root != "b" || sum.Version != 1 {
		t.Fatalf("%+v", sum)
	}
	req := appendReq(t, "d", 1, false, writeFile(t, sub, 2))
	req.Root = "b"
	res, code, eb := ts.commit(t, req)
	mustOK(t, code, eb)
	if res.Root != "b" || res.Version != 2 {
		t.Fatalf("%+v", res)
	}
	if _, err := New(context.Background(), Config{Roots: []Root{{Name: "a", URL: dir}, {Name: "a", URL: dir}}, Logger: quietLogger()}); err == nil {
		t.Fatal("duplicate root names accepted")
	}
	if _, err := New(context.Background(), Config{Roots: []Root{{Name: "a/b", URL: dir}}, Logger: quietLogger()}); err == nil {
		t.Fatal("bad root name accepted")
	}
}
