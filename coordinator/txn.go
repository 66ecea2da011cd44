package coordinator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/commit"
	coordapi "github.com/lancekeeper/lancekeeper/coordinator/api"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

// errBadRequest marks requests that are malformed (HTTP 400 bad_request).
var errBadRequest = errors.New("bad request")

// errDataFileMissing marks a new data file that does not exist where the
// coordinator looks for it (HTTP 400 data_file_not_found).
var errDataFileMissing = errors.New("data file not found")

// maxDeleteRanges bounds the ranges of one delete request (each range is
// cheap, but a body of millions of them is not).
const maxDeleteRanges = 1 << 16

// DecodeCommitRequest decodes a commit request body: one JSON object, no
// unknown fields, nothing after it. It checks the shape only (exactly one
// operation, a valid dataset name, known requirement types); the content is
// checked when the transaction is built.
func DecodeCommitRequest(data []byte) (*coordapi.CommitRequest, error) {
	req := &coordapi.CommitRequest{}
	if err := decodeStrict(data, req); err != nil {
		return nil, err
	}
	if err := coordapi.ValidateDatasetName(req.Dataset); err != nil {
		return nil, err
	}
	if req.Operation.Kind() == "" {
		return nil, fmt.Errorf("%w: operation must set exactly one of append, overwrite, delete, update_config, create_index, drop_index, enable_zone_write_seeds, restore, reserve_fragments", errBadRequest)
	}
	for i, r := range req.Requirements {
		switch r.Type {
		case coordapi.RequireLatestVersion, coordapi.RequireDataFilesAbsent:
		default:
			return nil, fmt.Errorf("%w: requirement %d has unknown type %q (want %s or %s)", errBadRequest, i, r.Type, coordapi.RequireLatestVersion, coordapi.RequireDataFilesAbsent)
		}
	}
	return req, nil
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: body: %v", errBadRequest, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: body: data after the JSON object", errBadRequest)
	}
	return nil
}

var protoIn = protojson.UnmarshalOptions{DiscardUnknown: false}

func decodeFragments(raw []json.RawMessage, what string) ([]*pb.DataFragment, error) {
	out := make([]*pb.DataFragment, 0, len(raw))
	seen := make(map[string]int, len(raw))
	for i, r := range raw {
		f := &pb.DataFragment{}
		if err := protoIn.Unmarshal(r, f); err != nil {
			return nil, fmt.Errorf("%w: %s fragment %d: %v", errBadRequest, what, i, err)
		}
		if len(f.GetFiles()) == 0 {
			return nil, fmt.Errorf("%w: %s fragment %d has no data file", errBadRequest, what, i)
		}
		for j, df := range f.GetFiles() {
			if df.BaseId != nil {
				return nil, fmt.Errorf("%w: %s fragment %d file %d (%s) lives in base path %d; the coordinator commits data files under the dataset's own data/ directory only", errBadRequest, what, i, j, df.GetPath(), df.GetBaseId())
			}
			if err := store.ValidateKey(manifest.DataDir + "/" + df.GetPath()); err != nil {
				return nil, fmt.Errorf("%w: %s fragment %d file %d: %v", errBadRequest, what, i, j, err)
			}
		}
		if f.GetDeletionFile() != nil {
			return nil, fmt.Errorf("%w: %s fragment %d has a deletion file; new fragments carry none", errBadRequest, what, i)
		}
		for j, df := range f.GetFiles() {
			if k, dup := seen[df.GetPath()]; dup {
				return nil, fmt.Errorf("%w: %s fragment %d file %d (%s) is already named by fragment %d; a version never references a data file twice",
					commit.ErrInvalidTransaction, what, i, j, df.GetPath(), k)
			}
			seen[df.GetPath()] = i
		}
		out = append(out, f)
	}
	return out, nil
}

// markSeeds opens every new data file (which also proves it exists where
// this coordinator looks), compares the client's description of it with
// the file (commit.VerifyNewFragment: rows, fields and columns, size, file
// version; a mismatch is 400 invalid_transaction) and records whether it
// carries a v1 zone write seed. The coordinator never trusts a client's
// word on a data file: Lance 12 reads what the manifest says.
func markSeeds(ctx context.Context, st commit.Store, t *commit.Transaction, frags []*pb.DataFragment) error {
	for _, f := range frags {
		if ls, ok := st.(interface{ CheckNoSymlinks(string) error }); ok {
			for _, df := range f.GetFiles() {
				if err := ls.CheckNoSymlinks(manifest.DataDir + "/" + df.GetPath()); err != nil {
					return fmt.Errorf("%w: data file %s: %v", commit.ErrInvalidTransaction, df.GetPath(), err)
				}
			}
		}
		v1, err := commit.VerifyNewFragment(ctx, st, f)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%w: %v; the client must write data files to the same dataset location the coordinator serves (see docs/coordinator.md, \"Where data files go\")", errDataFileMissing, err)
		}
		if err != nil {
			return err
		}
		for _, df := range f.GetFiles() {
			t.MarkSeedFiles(v1, df.GetPath())
		}
	}
	return nil
}

// dataFilesAbsent is the data_files_absent requirement.
type dataFilesAbsent []string

func (r dataFilesAbsent) String() string {
	if len(r) == 1 {
		return fmt.Sprintf("data file %s is not referenced yet", r[0])
	}
	return fmt.Sprintf("none of %d data files (first %s) is referenced yet", len(r), r[0])
}

func (r dataFilesAbsent) Check(latest *pb.Manifest) error {
	if latest == nil || len(r) == 0 {
		return nil
	}
	want := make(map[string]bool, len(r))
	for _, p := range r {
		want[p] = true
	}
	for _, f := range latest.GetFragments() {
		for _, df := range f.GetFiles() {
			if df.BaseId == nil && want[df.GetPath()] {
				return &commit.RequirementError{Requirement: r.String(), Latest: latest.GetVersion(),
					Detail: fmt.Sprintf("data file %s/%s is already referenced by fragment %d", manifest.DataDir, df.GetPath(), f.GetId())}
			}
		}
	}
	return nil
}

func filePaths(frags []*pb.DataFragment) []string {
	var out []string
	for _, f := range frags {
		for _, df := range f.GetFiles() {
			out = append(out, df.GetPath())
		}
	}
	return out
}

// prepared is a commit request turned into what the dataset worker runs.
type prepared struct {
	op   string // operation kind, for metrics and logs
	txn  *commit.Transaction
	opts commit.Options
	// raw is the dataset's store for Config.AfterCommit.
	raw *store.Store
	// enableSeeds runs commit.EnableZoneWriteSeeds instead of txn.
	enableSeeds bool
	// batchable: an Append that may be merged with others into one version.
	batchable bool
}

// buildTransaction turns a decoded request into a transaction for the
// dataset in st. It does the I/O the operation needs before it can be
// queued: inspecting new data files for seeds, reading the read version's
// manifest (Delete, index operations) and writing deletion files (Delete).
func (s *Server) buildTransaction(ctx context.Context, st commit.Store, req *coordapi.CommitRequest) (*prepared, error) {
	op := req.Operation
	p := &prepared{op: op.Kind(), opts: commit.Options{MaxRetries: s.cfg.MaxRetries, AllowUnsafeCommit: s.cfg.AllowUnsafeCommit,
		EnableZoneWriteSeeds: req.EnableZoneWriteSeeds}}
	rv := req.ReadVersion
	needRead := func() error {
		if rv == 0 {
			return fmt.Errorf("%w: %s needs read_version ≥ 1", errBadRequest, p.op)
		}
		return nil
	}
	readFile := func() (*manifest.File, error) {
		if err := needRead(); err != nil {
			return nil, err
		}
		f, err := manifest.ReadVersion(ctx, st.Bucket(), st.KeyPrefix(), rv)
		if err != nil {
			if manifest.IsNotFound(err) {
				return nil, fmt.Errorf("%w: read_version %d of %s does not exist: %v", commit.ErrDatasetNotFound, rv, st, err)
			}
			return nil, err
		}
		return f, nil
	}
	var newFrags []*pb.DataFragment
	switch {
	case op.Append != nil:
		if err := needRead(); err != nil {
			return nil, err
		}
		frags, err := decodeFragments(op.Append.Fragments, "append")
		if err != nil {
			return nil, err
		}
		if len(frags) == 0 {
			return nil, fmt.Errorf("%w: append has no fragments", errBadRequest)
		}
		p.txn = commit.NewAppend(rv, frags)
		newFrags = frags
	case op.Overwrite != nil:
		o := op.Overwrite
		frags, err := decodeFragments(o.Fragments, "overwrite")
		if err != nil {
			return nil, err
		}
		schema := make([]*pb.Field, 0, len(o.Schema))
		for i, r := range o.Schema {
			f := &pb.Field{}
			if err := protoIn.Unmarshal(r, f); err != nil {
				return nil, fmt.Errorf("%w: overwrite schema field %d: %v", errBadRequest, i, err)
			}
			schema = append(schema, f)
		}
		if len(schema) == 0 {
			return nil, fmt.Errorf("%w: overwrite has no schema", errBadRequest)
		}
		p.txn = commit.NewOverwrite(rv, commit.OverwriteSpec{Fragments: frags, Schema: schema, SchemaMetadata: o.SchemaMetadata,
			ConfigUpserts: o.ConfigUpserts, StableRowIDs: o.StableRowIDs})
		newFrags = frags
	case op.Delete != nil:
		rows, err := deletionRows(op.Delete.Fragments)
		if err != nil {
			return nil, err
		}
		f, err := readFile()
		if err != nil {
			return nil, err
		}
		if p.txn, err = commit.NewDelete(ctx, st, f, rows, op.Delete.Predicate); err != nil {
			return nil, err
		}
	case op.UpdateConfig != nil:
		if err := needRead(); err != nil {
			return nil, err
		}
		spec, err := updateConfigSpec(op.UpdateConfig)
		if err != nil {
			return nil, err
		}
		p.txn = commit.NewUpdateConfig(rv, spec)
	case op.CreateIndex != nil:
		f, err := readFile()
		if err != nil {
			return nil, err
		}
		var added []*pb.IndexMetadata
		for i, r := range op.CreateIndex.NewIndices {
			idx := &pb.IndexMetadata{}
			if err := protoIn.Unmarshal(r, idx); err != nil {
				return nil, fmt.Errorf("%w: create_index new index %d: %v", errBadRequest, i, err)
			}
			// The segment's folder must not lead out of the root through a
			// symlink (issue 15 item 4), as for data files.
			if ls, ok := st.(interface{ CheckNoSymlinks(string) error }); ok {
				u, err := manifest.IndexUUID(idx)
				if err != nil {
					return nil, fmt.Errorf("%w: create_index new index %d: %v", errBadRequest, i, err)
				}
				if err := ls.CheckNoSymlinks("_indices/" + u); err != nil {
					return nil, fmt.Errorf("%w: index segment %s: %v", commit.ErrInvalidTransaction, u, err)
				}
			}
			added = append(added, idx)
		}
		var removed []*pb.IndexMetadata
		for _, u := range op.CreateIndex.RemovedUUIDs {
			idx := findIndex(f.Indices(), u)
			if idx == nil {
				return nil, fmt.Errorf("%w: version %d has no index segment with uuid %s", commit.ErrInvalidTransaction, rv, u)
			}
			removed = append(removed, idx)
		}
		if len(added) == 0 && len(removed) == 0 {
			return nil, fmt.Errorf("%w: create_index adds and removes nothing", errBadRequest)
		}
		p.txn = commit.NewCreateIndex(rv, added, removed)
	case op.DropIndex != nil:
		f, err := readFile()
		if err != nil {
			return nil, err
		}
		if p.txn, err = commit.NewDropIndex(rv, f.Indices(), op.DropIndex.Name); err != nil {
			return nil, err
		}
	case op.EnableZoneWriteSeeds != nil:
		p.enableSeeds = true
	case op.Restore != nil:
		if err := needRead(); err != nil {
			return nil, err
		}
		if op.Restore.Version == 0 {
			return nil, fmt.Errorf("%w: restore needs a version ≥ 1", errBadRequest)
		}
		p.txn = commit.NewRestore(rv, op.Restore.Version)
	case op.ReserveFragments != nil:
		if err := needRead(); err != nil {
			return nil, err
		}
		if op.ReserveFragments.Count == 0 {
			return nil, fmt.Errorf("%w: reserve_fragments needs a count ≥ 1", errBadRequest)
		}
		p.txn = commit.NewReserveFragments(rv, op.ReserveFragments.Count)
	}
	if len(req.Properties) > 0 {
		if p.enableSeeds {
			return nil, fmt.Errorf("%w: enable_zone_write_seeds takes no properties", errBadRequest)
		}
		keys := make([]string, 0, len(req.Properties))
		for k := range req.Properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p.txn.SetProperty(k, req.Properties[k])
		}
	}
	for _, r := range req.Requirements {
		switch r.Type {
		case coordapi.RequireLatestVersion:
			p.opts.Requirements = append(p.opts.Requirements, commit.RequireLatestVersion(r.Version))
		case coordapi.RequireDataFilesAbsent:
			if paths := filePaths(newFrags); len(paths) > 0 {
				p.opts.Requirements = append(p.opts.Requirements, dataFilesAbsent(paths))
			}
		}
	}
	if len(newFrags) > 0 {
		if err := markSeeds(ctx, st, p.txn, newFrags); err != nil {
			return nil, err
		}
	}
	p.batchable = req.AllowBatching && !s.cfg.DisableGroupCommit && op.Append != nil && len(req.Properties) == 0
	return p, nil
}

func findIndex(indices []*pb.IndexMetadata, uuid string) *pb.IndexMetadata {
	for _, idx := range indices {
		if u, err := manifest.IndexUUID(idx); err == nil && u == strings.ToLower(uuid) {
			return proto.Clone(idx).(*pb.IndexMetadata)
		}
	}
	return nil
}

// deletionRows turns the request's row lists into bitmaps per fragment.
func deletionRows(in []coordapi.FragmentDeletion) (map[uint64]*roaring.Bitmap, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("%w: delete names no fragment", errBadRequest)
	}
	out := map[uint64]*roaring.Bitmap{}
	ranges := 0
	for i, fd := range in {
		b := out[fd.ID]
		if b == nil {
			b = roaring.New()
			out[fd.ID] = b
		}
		b.AddMany(fd.Rows)
		for j, r := range fd.Ranges {
			if ranges++; ranges > maxDeleteRanges {
				return nil, fmt.Errorf("%w: delete has more than %d ranges", errBadRequest, maxDeleteRanges)
			}
			if r[0] >= r[1] || r[1] > 1<<32 {
				return nil, fmt.Errorf("%w: delete fragment %d range %d [%d, %d) is empty or beyond 2^32", errBadRequest, i, j, r[0], r[1])
			}
			b.AddRange(r[0], r[1])
		}
		if b.IsEmpty() {
			return nil, fmt.Errorf("%w: delete fragment %d (id %d) lists no rows", errBadRequest, i, fd.ID)
		}
	}
	return out, nil
}

// changes turns a JSON map into sorted ConfigChanges.
func changes(m map[string]*string) []commit.ConfigChange {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]commit.ConfigChange, 0, len(keys))
	for _, k := range keys {
		out = append(out, commit.ConfigChange{Key: k, Value: m[k]})
	}
	return out
}

func updateConfigSpec(u *coordapi.UpdateConfigOp) (commit.UpdateConfigSpec, error) {
	spec := commit.UpdateConfigSpec{
		Config: changes(u.Config), ReplaceConfig: u.ReplaceConfig,
		TableMetadata: changes(u.TableMetadata), ReplaceTableMetadata: u.ReplaceTableMetadata,
		SchemaMetadata: changes(u.SchemaMetadata), ReplaceSchemaMetadata: u.ReplaceSchemaMetadata,
	}
	for k, m := range u.FieldMetadata {
		id, err := strconv.ParseInt(k, 10, 32)
		if err != nil {
			return spec, fmt.Errorf("%w: update_config field_metadata key %q is not a field id", errBadRequest, k)
		}
		if spec.FieldMetadata == nil {
			spec.FieldMetadata = map[int32][]commit.ConfigChange{}
		}
		spec.FieldMetadata[int32(id)] = changes(m)
	}
	if len(spec.Config)+len(spec.TableMetadata)+len(spec.SchemaMetadata)+len(spec.FieldMetadata) == 0 &&
		!u.ReplaceConfig && !u.ReplaceTableMetadata && !u.ReplaceSchemaMetadata {
		return spec, fmt.Errorf("%w: update_config changes nothing (use enable_zone_write_seeds for the seed activation)", errBadRequest)
	}
	return spec, nil
}
