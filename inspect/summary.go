package inspect

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
)

// Options selects the version to inspect. At most one of Version and Tag
// may be set; neither means the latest version of Branch.
type Options struct {
	Version uint64 // 0: latest
	Tag     string
	Branch  string // "" or "main": the main line
	// SkipRowCount leaves NumRows unknown instead of reading data or
	// deletion files when the manifest does not record the counts.
	SkipRowCount bool
}

// WriterVersion is Manifest.writer_version.
type WriterVersion struct {
	Library       string  `json:"library"`
	Version       string  `json:"version"`
	Prerelease    *string `json:"prerelease,omitempty"`
	BuildMetadata *string `json:"build_metadata,omitempty"`
}

// DataFormat is Manifest.data_format.
type DataFormat struct {
	FileFormat string `json:"file_format"`
	Version    string `json:"version"`
}

// Field is one field of the flattened schema, in manifest order.
type Field struct {
	ID          int32  `json:"id"`
	ParentID    int32  `json:"parent_id"`
	Name        string `json:"name"`
	LogicalType string `json:"logical_type"`
	Nullable    bool   `json:"nullable"`
	// ArrowType is the field's Arrow type ("int32", "list<utf8>",
	// "struct<a: int32>", …), computed from logical_type and children.
	ArrowType string `json:"arrow_type"`
}

// Index is one index segment of the index section.
type Index struct {
	Name string `json:"name"`
	UUID string `json:"uuid"`
	// Fields are the names of the indexed fields (FieldIDs resolved
	// against the schema; "#<id>" when the id is not in the schema).
	Fields   []string `json:"fields"`
	FieldIDs []int32  `json:"field_ids"`
	// Type is the index kind derived from index_details' type URL: BTree,
	// Bitmap, LabelList, FTS (inverted), NGram, ZoneMap, BloomFilter,
	// Vector, or Unknown when the manifest has no details (≤ 0.19).
	Type           string `json:"type"`
	TypeURL        string `json:"type_url,omitempty"`
	DatasetVersion uint64 `json:"dataset_version"`
	// System is true for Lance's reserved system indices ("__…").
	System bool `json:"system,omitempty"`
	// IndexedRows / UnindexedRows are what Lance 12's index statistics
	// report for the index name this segment belongs to: the live rows of
	// the version's fragments in the union of the name's stored fragment
	// bitmaps, and the version's other live rows. Lance reads the bitmaps
	// as stored (an old writer's possibly wrong one included; only a
	// commit recomputes them, §5.2 e). nil when a segment of the name has
	// no bitmap (Lance's statistics fail then), a bitmap does not decode,
	// or the row counts are unknown.
	IndexedRows   *uint64 `json:"num_indexed_rows,omitempty"`
	UnindexedRows *uint64 `json:"num_unindexed_rows,omitempty"`
}

// Summary is what inspect reports about one version.
type Summary struct {
	Dataset      string         `json:"dataset"`
	Branch       string         `json:"branch"` // "main" or the branch name
	Version      uint64         `json:"version"`
	ManifestPath string         `json:"manifest_path"` // relative to the main dataset root
	ManifestSize int64          `json:"manifest_size"`
	NamingScheme string         `json:"naming_scheme"`
	Timestamp    string         `json:"timestamp"` // RFC 3339, UTC; "" when absent
	WriterVer    *WriterVersion `json:"writer_version"`
	DataFormat   *DataFormat    `json:"data_format"`

	ReaderFlags     uint64   `json:"reader_feature_flags"`
	WriterFlags     uint64   `json:"writer_feature_flags"`
	ReaderFlagNames []string `json:"reader_feature_flag_names"`
	WriterFlagNames []string `json:"writer_feature_flag_names"`
	// ReadRefused / WriteRefused name why this build would refuse to read
	// or write the version ("" when it would not): unknown bits or a
	// half-set paired bit. RefusedReaderBits / RefusedWriterBits are the
	// unknown bits of each word.
	ReadRefused       string `json:"read_refused,omitempty"`
	WriteRefused      string `json:"write_refused,omitempty"`
	RefusedReaderBits uint64 `json:"refused_reader_bits"`
	RefusedWriterBits uint64 `json:"refused_writer_bits"`

	NumFragments int `json:"num_fragments"`
	NumDataFiles int `json:"num_data_files"`
	// PhysicalRows is the sum of the fragments' physical_rows as recorded
	// (0 for fragments that do not record it).
	PhysicalRows uint64 `json:"physical_rows"`
	// PhysicalRowsError says why PhysicalRows is 0 although fragments
	// record rows: their sum overflows uint64 (issue 15 item 10).
	PhysicalRowsError string `json:"physical_rows_error,omitempty"`
	// NumRows is the number of live rows (after deletions), computed from
	// the manifest and, where it lacks counts, the data and deletion files.
	// nil when it could not be computed; NumRowsError then says why.
	NumRows      *uint64 `json:"num_rows"`
	NumRowsError string  `json:"num_rows_error,omitempty"`
	DeletedRows  *uint64 `json:"num_deleted_rows"`

	Fields        []Field           `json:"fields"`
	Indices       []Index           `json:"indices"`
	Tags          []string          `json:"tags"` // tags pointing at this version
	Config        map[string]string `json:"config"`
	MaxFragmentID *uint32           `json:"max_fragment_id"`
}

// Summarize inspects the version opts selects of the dataset d. It applies
// no flag refusal (it reports refusals instead). Errors from reading or
// decoding the manifest are returned as is (they match manifest.ErrCorrupt
// or manifest.ErrNotFound where that applies).
func Summarize(ctx context.Context, d *snapshot.Dataset, opts Options) (*Summary, error) {
	branch, version, err := resolve(ctx, d, opts)
	if err != nil {
		return nil, err
	}
	st, err := d.BranchStore(branch)
	if err != nil {
		return nil, err
	}
	root := strings.TrimSuffix(st.KeyPrefix(), "/")
	var f *manifest.File
	if version == 0 {
		f, _, err = manifest.LoadLatest(ctx, st.Bucket(), root)
	} else {
		f, err = manifest.ReadVersion(ctx, st.Bucket(), root, version)
	}
	if err != nil {
		return nil, err
	}
	if version != 0 && f.Manifest.GetVersion() != version {
		return nil, &manifest.FormatError{File: f.Name, Offset: f.ManifestPos, Reason: fmt.Sprintf("manifest file of version %d says version %d", version, f.Manifest.GetVersion())}
	}
	s := FromFile(f)
	s.Dataset = d.URI()
	s.Branch = snapshot.MainBranch
	if branch != "" {
		s.Branch = branch
	}
	s.ManifestPath = branchPath(branch, strings.TrimPrefix(strings.TrimPrefix(f.Name, root), "/"))
	if _, scheme, ok := manifest.ParseManifestName(path.Base(f.Name)); ok {
		s.NamingScheme = scheme.String()
	}
	tags, err := d.ListTags(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tags: %w", err)
	}
	for _, t := range tags {
		if t.Branch == branch && t.Version == s.Version {
			s.Tags = append(s.Tags, t.Name)
		}
	}
	if !opts.SkipRowCount {
		indexedRows(f.Indices(), countRows(ctx, st, f.Manifest, s), s)
	}
	refineIndexTypes(ctx, st, f, s)
	return s, nil
}

// branchPath makes rel (relative to a branch root) relative to the main
// dataset root: "tree/<branch>/" + rel for a branch.
func branchPath(branch, rel string) string {
	if br := snapshot.BranchRoot(branch); br != "" {
		return br + "/" + rel
	}
	return rel
}

// resolve turns options into (branch, version) without reading manifests.
func resolve(ctx context.Context, d *snapshot.Dataset, opts Options) (string, uint64, error) {
	branch := opts.Branch
	if branch == snapshot.MainBranch {
		branch = ""
	}
	if opts.Tag == "" {
		if branch != "" {
			if _, err := d.GetBranch(ctx, branch); err != nil {
				return "", 0, err
			}
		}
		return branch, opts.Version, nil
	}
	if opts.Version != 0 {
		return "", 0, fmt.Errorf("give a version or a tag, not both (version %d, tag %q)", opts.Version, opts.Tag)
	}
	t, err := d.GetTag(ctx, opts.Tag)
	if err != nil {
		return "", 0, err
	}
	return t.Branch, t.Version, nil
}

// FromFile summarizes what a manifest file alone says: everything but the
// dataset address, branch, naming scheme, tags and the live row count.
func FromFile(f *manifest.File) *Summary {
	m := f.Manifest
	s := &Summary{
		Version:         m.GetVersion(),
		ManifestPath:    f.Name,
		ManifestSize:    f.Size,
		ReaderFlags:     m.GetReaderFeatureFlags(),
		WriterFlags:     m.GetWriterFeatureFlags(),
		ReaderFlagNames: FlagNames(m.GetReaderFeatureFlags()),
		WriterFlagNames: FlagNames(m.GetWriterFeatureFlags()),
		NumFragments:    len(m.GetFragments()),
		Fields:          []Field{},
		Indices:         []Index{},
		Tags:            []string{},
		Config:          map[string]string{},
		MaxFragmentID:   m.MaxFragmentId,
	}
	if ts := m.GetTimestamp(); ts != nil && (ts.GetSeconds() != 0 || ts.GetNanos() != 0) {
		s.Timestamp = ts.AsTime().UTC().Format(time.RFC3339Nano)
	}
	if wv := m.GetWriterVersion(); wv != nil {
		s.WriterVer = &WriterVersion{Library: wv.GetLibrary(), Version: wv.GetVersion(), Prerelease: wv.Prerelease, BuildMetadata: wv.BuildMetadata}
	}
	if df := m.GetDataFormat(); df != nil {
		s.DataFormat = &DataFormat{FileFormat: df.GetFileFormat(), Version: df.GetVersion()}
	}
	r, w := s.ReaderFlags, s.WriterFlags
	if err := flags.CheckRead(r, w); err != nil {
		s.ReadRefused = err.Error()
	}
	if err := flags.CheckWrite(r, w); err != nil {
		s.WriteRefused = err.Error()
	}
	s.RefusedReaderBits = flags.Unsupported(r)
	s.RefusedWriterBits = flags.Unsupported(w)
	for _, frag := range m.GetFragments() {
		sum, carry := bits.Add64(s.PhysicalRows, frag.GetPhysicalRows(), 0)
		if carry != 0 && s.PhysicalRowsError == "" {
			s.PhysicalRowsError = fmt.Sprintf("the physical_rows of the fragments overflow 2^64 at fragment %d (a hostile or corrupt manifest)", frag.GetId())
		}
		s.PhysicalRows = sum
		s.NumDataFiles += len(frag.GetFiles())
	}
	if s.PhysicalRowsError != "" {
		s.PhysicalRows = 0
	}
	fields := m.GetFields()
	kids := childIndex(fields)
	byID := make(map[int32]string, len(fields))
	for i, fd := range fields {
		s.Fields = append(s.Fields, Field{
			ID: fd.GetId(), ParentID: fd.GetParentId(), Name: fd.GetName(),
			LogicalType: fd.GetLogicalType(), Nullable: fd.GetNullable(),
			ArrowType: arrowType(fields, kids, i, 0),
		})
		if _, dup := byID[fd.GetId()]; !dup {
			byID[fd.GetId()] = fieldPath(fields, i)
		}
	}
	for _, idx := range f.Indices() {
		s.Indices = append(s.Indices, indexSummary(idx, byID))
	}
	for k, v := range m.GetConfig() {
		s.Config[k] = v
	}
	return s
}

// FlagNames returns the registry names of a word's bits, lower-case (as
// the corpus expect files spell them: "deletion_files"); every
// *_feature_flag_names key of the CLI's JSON uses it.
func FlagNames(word uint64) []string {
	names := flags.Names(word)
	for i, n := range names {
		names[i] = strings.ToLower(n)
	}
	return names
}

// fieldPath returns the dotted path of fields[i] ("s.x").
func fieldPath(fields []*pb.Field, i int) string {
	byID := make(map[int32]*pb.Field, len(fields))
	for _, f := range fields {
		if _, dup := byID[f.GetId()]; !dup {
			byID[f.GetId()] = f
		}
	}
	name := fields[i].GetName()
	cur := fields[i]
	for depth := 0; cur.GetParentId() >= 0 && depth < 64; depth++ {
		p, ok := byID[cur.GetParentId()]
		if !ok || p == cur {
			break
		}
		name = p.GetName() + "." + name
		cur = p
	}
	return name
}

// indexType derives the index kind from index_details' type URL (compared
// case-insensitively; both the lance.table and lance.index.pb packages).
func indexType(typeURL string) string {
	if typeURL == "" {
		return "Unknown"
	}
	name := strings.ToLower(typeURL[strings.LastIndex(typeURL, ".")+1:])
	switch strings.TrimSuffix(name, "indexdetails") {
	case "btree":
		return "BTree"
	case "bitmap":
		return "Bitmap"
	case "labellist":
		return "LabelList"
	case "inverted":
		return "FTS"
	case "ngram":
		return "NGram"
	case "zonemap":
		return "ZoneMap"
	case "bloomfilter":
		return "BloomFilter"
	case "vector":
		return "Vector"
	case "memwal":
		return "MemWal"
	}
	return strings.TrimSuffix(typeURL[strings.LastIndex(typeURL, ".")+1:], "IndexDetails")
}

func indexSummary(idx *pb.IndexMetadata, byID map[int32]string) Index {
	out := Index{
		Name:           idx.GetName(),
		FieldIDs:       append([]int32{}, idx.GetFields()...),
		Fields:         []string{},
		TypeURL:        idx.GetIndexDetails().GetTypeUrl(),
		DatasetVersion: idx.GetDatasetVersion(),
		System:         strings.HasPrefix(idx.GetName(), "__"),
	}
	if u, err := manifest.IndexUUID(idx); err == nil {
		out.UUID = u
	}
	out.Type = indexType(out.TypeURL)
	for _, id := range idx.GetFields() {
		if n, ok := byID[id]; ok {
			out.Fields = append(out.Fields, n)
		} else {
			out.Fields = append(out.Fields, fmt.Sprintf("#%d", id))
		}
	}
	return out
}

// countRows fills NumRows / DeletedRows, reading data files for fragments
// without physical_rows and deletion files without num_deleted_rows, and
// returns the live rows of each fragment (nil when they are unknown).
func countRows(ctx context.Context, st *store.Store, m *pb.Manifest, s *Summary) map[uint64]uint64 {
	res, err := manifest.NewResolver(m)
	if err != nil {
		s.NumRowsError = err.Error()
		return nil
	}
	fs := &files{bases: store.NewBases(st), res: res, distrust: m.GetWriterVersion() == nil}
	defer fs.close()
	var live, deleted uint64
	liveOf := make(map[uint64]uint64, len(m.GetFragments()))
	for _, frag := range m.GetFragments() {
		phys, err := fs.fragmentRows(ctx, frag)
		if err != nil {
			s.NumRowsError = err.Error()
			return nil
		}
		del, err := fs.deletedRows(ctx, frag)
		if err != nil {
			s.NumRowsError = err.Error()
			return nil
		}
		if del > phys {
			s.NumRowsError = fmt.Sprintf("fragment %d: %d deleted rows but only %d rows", frag.GetId(), del, phys)
			return nil
		}
		var c1, c2 uint64
		liveOf[frag.GetId()] += phys - del
		live, c1 = bits.Add64(live, phys-del, 0)
		deleted, c2 = bits.Add64(deleted, del, 0)
		if c1|c2 != 0 {
			s.NumRowsError = fmt.Sprintf("the row counts overflow 2^64 at fragment %d (a hostile or corrupt manifest)", frag.GetId())
			return nil
		}
	}
	s.NumRows, s.DeletedRows = &live, &deleted
	return liveOf
}

// indexedRows fills each index's IndexedRows / UnindexedRows as Lance 12's
// index statistics count them, from the stored fragment bitmaps (see
// Index).
func indexedRows(indices []*pb.IndexMetadata, liveOf map[uint64]uint64, s *Summary) {
	if s.NumRows == nil || len(indices) != len(s.Indices) {
		return
	}
	total := *s.NumRows
	type group struct {
		frags *roaring.Bitmap
		ok    bool
	}
	groups := map[string]*group{}
	for i, ix := range s.Indices {
		g := groups[ix.Name]
		if g == nil {
			g = &group{frags: roaring.New(), ok: true}
			groups[ix.Name] = g
		}
		raw := indices[i].GetFragmentBitmap()
		bm := roaring.New()
		if len(raw) == 0 {
			g.ok = false
			continue
		}
		if _, err := bm.FromUnsafeBytes(raw); err != nil {
			g.ok = false
			continue
		}
		g.frags.Or(bm)
	}
	for i, ix := range s.Indices {
		g := groups[ix.Name]
		if !g.ok {
			continue
		}
		var indexed uint64
		for id, n := range liveOf {
			if id <= 0xFFFFFFFF && g.frags.Contains(uint32(id)) {
				indexed += n
			}
		}
		un := total - indexed
		s.Indices[i].IndexedRows, s.Indices[i].UnindexedRows = &indexed, &un
	}
}

// VersionEntry is one line of `lancekeeper versions`.
type VersionEntry struct {
	Version      uint64   `json:"version"`
	Timestamp    string   `json:"timestamp"` // RFC 3339, UTC; "" when the manifest has none
	NamingScheme string   `json:"naming_scheme"`
	ManifestPath string   `json:"manifest_path"`
	ManifestSize int64    `json:"manifest_size"`
	ReaderFlags  uint64   `json:"reader_feature_flags"`
	WriterFlags  uint64   `json:"writer_feature_flags"`
	NumFragments int      `json:"num_fragments"`
	Tags         []string `json:"tags"`
}

// Versions lists every version of a branch ("" for main), ascending, with
// the timestamp each manifest records.
func Versions(ctx context.Context, d *snapshot.Dataset, branch string) ([]VersionEntry, error) {
	if branch == snapshot.MainBranch {
		branch = ""
	}
	if branch != "" {
		if _, err := d.GetBranch(ctx, branch); err != nil {
			return nil, err
		}
	}
	st, err := d.BranchStore(branch)
	if err != nil {
		return nil, err
	}
	root := strings.TrimSuffix(st.KeyPrefix(), "/")
	infos, err := manifest.ListVersions(ctx, st.Bucket(), root)
	if err != nil {
		return nil, err
	}
	tags, err := d.ListTags(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tags: %w", err)
	}
	out := make([]VersionEntry, 0, len(infos))
	for _, info := range infos {
		f, err := manifest.ReadInfo(ctx, st.Bucket(), root, info)
		if err != nil {
			return nil, err
		}
		if f.Manifest.GetVersion() != info.Version {
			return nil, &manifest.FormatError{File: f.Name, Offset: f.ManifestPos, Reason: fmt.Sprintf("manifest file of version %d says version %d", info.Version, f.Manifest.GetVersion())}
		}
		s := FromFile(f)
		e := VersionEntry{
			Version: info.Version, Timestamp: s.Timestamp, NamingScheme: info.Scheme.String(),
			ManifestPath: branchPath(branch, info.Path), ManifestSize: f.Size, ReaderFlags: s.ReaderFlags, WriterFlags: s.WriterFlags,
			NumFragments: s.NumFragments, Tags: []string{},
		}
		for _, t := range tags {
			if t.Branch == branch && t.Version == info.Version {
				e.Tags = append(e.Tags, t.Name)
			}
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// IsBadInput reports whether err comes from the dataset's bytes or
// addressing (corrupt or missing manifest, unknown ref, mixed naming)
// rather than from the environment.
func IsBadInput(err error) bool {
	return errors.Is(err, manifest.ErrCorrupt) || errors.Is(err, manifest.ErrNotFound) ||
		errors.Is(err, manifest.ErrMixedNaming) || errors.Is(err, manifest.ErrRefNotFound) ||
		errors.Is(err, snapshot.ErrInvalidRef) || errors.Is(err, store.ErrNotFound)
}
