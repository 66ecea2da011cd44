package peerlance

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// Info is the output of `peer.mjs info`. Its shapes follow the corpus
// .expect.json format (lance-corpus/README.md), so Versions entries can be
// compared with an expect file's versions directly.
type Info struct {
	Dataset             string                `json:"dataset"`
	DatasetURI          string                `json:"dataset_uri"`
	LatestVersion       uint64                `json:"latest_version"`
	UsesV2ManifestPaths bool                  `json:"uses_v2_manifest_paths"`
	Tags                map[string]TagInfo    `json:"tags"`
	Versions            []VersionInfo         `json:"versions"`
	CheckedOut          VersionInfo           `json:"checked_out"`
	Branches            map[string]BranchInfo `json:"branches,omitempty"`
}

// Version returns the entry for version v.
func (in *Info) Version(v uint64) (VersionInfo, bool) {
	for _, e := range in.Versions {
		if e.Version == v {
			return e, true
		}
	}
	return VersionInfo{}, false
}

// TagInfo is one tag as Lance lists it.
type TagInfo struct {
	Version      uint64 `json:"version"`
	ManifestSize int64  `json:"manifest_size"`
}

// BranchInfo is one branch as Lance lists it.
type BranchInfo struct {
	ParentBranch  *string       `json:"parent_branch"`
	ParentVersion uint64        `json:"parent_version"`
	ManifestSize  int64         `json:"manifest_size"`
	LatestVersion uint64        `json:"latest_version"`
	Versions      []VersionInfo `json:"versions"`
}

// VersionInfo is what Lance reports for one version after checking it out.
// A part Lance could not produce is nil with its *Error field set to Lance's message.
type VersionInfo struct {
	Version      uint64            `json:"version"`
	Timestamp    string            `json:"timestamp"`    // ISO-8601, ms
	TimestampUS  int64             `json:"timestamp_us"` // µs since the epoch
	Metadata     map[string]string `json:"metadata"`     // listVersions summary (total_rows, ...)
	RowCount     *int64            `json:"row_count,omitempty"`
	Schema       *Schema           `json:"schema,omitempty"`
	Indices      []Index           `json:"indices,omitempty"`
	NumFragments *int64            `json:"num_fragments,omitempty"`
	Tags         []string          `json:"tags,omitempty"`

	CheckoutError     string `json:"checkout_error,omitempty"`
	RowCountError     string `json:"row_count_error,omitempty"`
	SchemaError       string `json:"schema_error,omitempty"`
	IndicesError      string `json:"indices_error,omitempty"`
	NumFragmentsError string `json:"num_fragments_error,omitempty"`
}

// Schema is an Arrow schema in the corpus notation.
type Schema struct {
	Fields   []Field           `json:"fields"`
	Metadata map[string]string `json:"metadata"`
}

// Field is an Arrow field in the corpus notation: Type is a type string such
// as "int64", "list<utf8>" or "timestamp[us, tz=UTC]".
type Field struct {
	Name       string            `json:"name"`
	Type       string            `json:"type"`
	Nullable   bool              `json:"nullable"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	Children   []Field           `json:"children,omitempty"`
	Dictionary *DictionaryInfo   `json:"dictionary,omitempty"`
	ValueType  string            `json:"value_type,omitempty"`
}

// DictionaryInfo describes a dictionary-encoded field.
type DictionaryInfo struct {
	IndexType string `json:"index_type"`
	Ordered   bool   `json:"ordered"`
	ID        int64  `json:"id"`
}

// Index is one entry of Lance's listIndices().
type Index struct {
	Name             string          `json:"name"`
	IndexType        string          `json:"index_type"`
	Columns          []string        `json:"columns"`
	IndexUUID        string          `json:"index_uuid,omitempty"`
	TypeURL          string          `json:"type_url,omitempty"`
	IndexVersion     *int64          `json:"index_version,omitempty"`
	NumSegments      *int64          `json:"num_segments,omitempty"`
	NumIndexedRows   *int64          `json:"num_indexed_rows,omitempty"`
	NumUnindexedRows *int64          `json:"num_unindexed_rows,omitempty"`
	IndexDetails     json.RawMessage `json:"index_details,omitempty"`
	CreatedAt        string          `json:"created_at,omitempty"`
}

// Rows is the output of `peer.mjs rows`: Rows[i][j] is the value of column
// Columns[j] in row i, in the driver's JSON value encoding (see ValueJSON and
// tests/peer/README.md). RowIDs and RowAddrs are decimal strings.
type Rows struct {
	Version  uint64              `json:"version"`
	NumRows  int                 `json:"num_rows"`
	Schema   Schema              `json:"schema"`
	Columns  []string            `json:"columns"`
	RowIDs   []string            `json:"row_ids"`
	RowAddrs []string            `json:"row_addrs"`
	Rows     [][]json.RawMessage `json:"rows"`
}

// Column returns the index of the named column, or -1.
func (r *Rows) Column(name string) int {
	for i, c := range r.Columns {
		if c == name {
			return i
		}
	}
	return -1
}

// RowAddr returns row i's address (fragment id << 32 | offset).
func (r *Rows) RowAddr(i int) (uint64, error) {
	if i < 0 || i >= len(r.RowAddrs) {
		return 0, fmt.Errorf("peerlance: row %d out of range (%d row addresses)", i, len(r.RowAddrs))
	}
	return strconv.ParseUint(r.RowAddrs[i], 10, 64)
}

// ReadOption selects what a read command looks at.
type ReadOption func(*[]string)

// AtVersion checks out version v before reading.
func AtVersion(v uint64) ReadOption {
	return func(a *[]string) { *a = append(*a, "--version", strconv.FormatUint(v, 10)) }
}

// AtTag checks out tag name before reading.
func AtTag(name string) ReadOption {
	return func(a *[]string) { *a = append(*a, "--tag", name) }
}

// OnBranch reads branch name (with AtVersion: that version of the branch).
func OnBranch(name string) ReadOption {
	return func(a *[]string) { *a = append(*a, "--branch", name) }
}

// Brief makes Info skip the per-version walk and branches (only CheckedOut is filled).
func Brief() ReadOption { return func(a *[]string) { *a = append(*a, "--brief") } }

// OrderByRowAddr makes Rows sort by row address instead of Lance's scan order.
func OrderByRowAddr() ReadOption {
	return func(a *[]string) { *a = append(*a, "--order", "rowaddr") }
}

// Where filters Rows and Count by a Lance SQL predicate.
func Where(pred string) ReadOption {
	return func(a *[]string) { *a = append(*a, "--where", pred) }
}

func withOpts(base []string, opts []ReadOption) []string {
	for _, o := range opts {
		o(&base)
	}
	return base
}

// Info runs `info DIR`.
func (p *Peer) Info(ctx context.Context, dir string, opts ...ReadOption) (*Info, error) {
	var in Info
	if err := p.RunJSON(ctx, &in, withOpts([]string{"info", dir}, opts)...); err != nil {
		return nil, err
	}
	return &in, nil
}

// Rows runs `rows DIR`.
func (p *Peer) Rows(ctx context.Context, dir string, opts ...ReadOption) (*Rows, error) {
	var r Rows
	if err := p.RunJSON(ctx, &r, withOpts([]string{"rows", dir}, opts)...); err != nil {
		return nil, err
	}
	if len(r.Rows) != r.NumRows {
		return nil, &DriverError{Args: []string{"rows", dir}, Err: fmt.Errorf("num_rows %d but %d rows", r.NumRows, len(r.Rows))}
	}
	return &r, nil
}

// Count runs `count DIR` and returns the checked-out version and its row count.
func (p *Peer) Count(ctx context.Context, dir string, opts ...ReadOption) (version uint64, rows int64, err error) {
	var c struct {
		Version  uint64 `json:"version"`
		RowCount int64  `json:"row_count"`
	}
	if err := p.RunJSON(ctx, &c, withOpts([]string{"count", dir}, opts)...); err != nil {
		return 0, 0, err
	}
	return c.Version, c.RowCount, nil
}

// Tags runs `tags DIR`.
func (p *Peer) Tags(ctx context.Context, dir string) (map[string]TagInfo, error) {
	var t struct {
		Tags map[string]TagInfo `json:"tags"`
	}
	if err := p.RunJSON(ctx, &t, "tags", dir); err != nil {
		return nil, err
	}
	return t.Tags, nil
}
