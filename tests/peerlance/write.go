package peerlance

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// WriteResult is what a writing command reports.
type WriteResult struct {
	OK          bool   `json:"ok"`
	Version     uint64 `json:"version"` // latest version after the command
	RowsUpdated *int64 `json:"rows_updated,omitempty"`
}

// CreateOptions are the table-creation settings Lance takes as storage options.
type CreateOptions struct {
	StorageVersion string // new_table_data_storage_version: "legacy", "2.0", "2.1", "2.2", ...; "" = Lance's default
	StableRowIDs   bool   // new_table_enable_stable_row_ids
	V1Paths        bool   // new_table_enable_v2_manifest_paths=false
}

func (o CreateOptions) args() []string {
	var a []string
	if o.StorageVersion != "" {
		a = append(a, "--storage-version", o.StorageVersion)
	}
	if o.StableRowIDs {
		a = append(a, "--stable-row-ids")
	}
	if o.V1Paths {
		a = append(a, "--v1-paths")
	}
	return a
}

// Assignment is one `--set COL=SQL` of an update.
type Assignment struct {
	Column string
	SQL    string
}

// IndexType names the index kinds create-index accepts.
type IndexType string

// Index kinds.
const (
	IndexBTree     IndexType = "btree"
	IndexBitmap    IndexType = "bitmap"
	IndexLabelList IndexType = "label_list"
	IndexFTS       IndexType = "fts"
)

// Exec runs a writing command `cmd DIR args...` and decodes its result.
func (p *Peer) Exec(ctx context.Context, cmd, dir string, args ...string) (*WriteResult, error) {
	var r WriteResult
	if err := p.RunJSON(ctx, &r, append([]string{cmd, dir}, args...)...); err != nil {
		return nil, err
	}
	if !r.OK {
		return nil, &DriverError{Args: append([]string{cmd, dir}, args...), Err: fmt.Errorf("result without ok: %+v", r)}
	}
	return &r, nil
}

// Create creates a dataset at dir from an Arrow IPC file (see WriteIPCFile).
func (p *Peer) Create(ctx context.Context, dir, ipcFile string, o CreateOptions) (*WriteResult, error) {
	return p.Exec(ctx, "create", dir, append([]string{"--ipc", ipcFile}, o.args()...)...)
}

// CreateEmpty creates an empty dataset whose schema is that of an Arrow IPC file.
func (p *Peer) CreateEmpty(ctx context.Context, dir, schemaIPCFile string, o CreateOptions) (*WriteResult, error) {
	return p.Exec(ctx, "create", dir, append([]string{"--schema-ipc", schemaIPCFile}, o.args()...)...)
}

// Append appends the rows of an Arrow IPC file.
func (p *Peer) Append(ctx context.Context, dir, ipcFile string) (*WriteResult, error) {
	return p.Exec(ctx, "append", dir, "--ipc", ipcFile)
}

// Delete deletes the rows matching a Lance SQL predicate.
func (p *Peer) Delete(ctx context.Context, dir, where string) (*WriteResult, error) {
	return p.Exec(ctx, "delete", dir, "--where", where)
}

// Update sets columns to SQL expressions on rows matching where ("" = all rows).
func (p *Peer) Update(ctx context.Context, dir, where string, set ...Assignment) (*WriteResult, error) {
	var a []string
	if where != "" {
		a = append(a, "--where", where)
	}
	for _, s := range set {
		a = append(a, "--set", s.Column+"="+s.SQL)
	}
	return p.Exec(ctx, "update", dir, a...)
}

// TagCreate creates tag name -> version.
func (p *Peer) TagCreate(ctx context.Context, dir, name string, version uint64) error {
	_, err := p.Exec(ctx, "tag-create", dir, name, strconv.FormatUint(version, 10))
	return err
}

// TagUpdate moves tag name to version.
func (p *Peer) TagUpdate(ctx context.Context, dir, name string, version uint64) error {
	_, err := p.Exec(ctx, "tag-update", dir, name, strconv.FormatUint(version, 10))
	return err
}

// TagDelete deletes tag name.
func (p *Peer) TagDelete(ctx context.Context, dir, name string) error {
	_, err := p.Exec(ctx, "tag-delete", dir, name)
	return err
}

// Restore commits a new version equal to version.
func (p *Peer) Restore(ctx context.Context, dir string, version uint64) (*WriteResult, error) {
	return p.Exec(ctx, "restore", dir, strconv.FormatUint(version, 10))
}

// CreateIndex creates an index on column; name "" lets Lance choose (<column>_idx).
func (p *Peer) CreateIndex(ctx context.Context, dir, column string, typ IndexType, name string) (*WriteResult, error) {
	a := []string{column, "--type", string(typ)}
	if name != "" {
		a = append(a, "--name", name)
	}
	return p.Exec(ctx, "create-index", dir, a...)
}

// DropIndex drops the named index.
func (p *Peer) DropIndex(ctx context.Context, dir, name string) (*WriteResult, error) {
	return p.Exec(ctx, "drop-index", dir, name)
}

// Optimize compacts the dataset (Lance's optimize(), default settings: old
// versions younger than 7 days are kept).
func (p *Peer) Optimize(ctx context.Context, dir string) (*WriteResult, error) {
	return p.Exec(ctx, "optimize", dir)
}

// AddColumnsSQL adds columns computed by SQL expressions, in order.
func (p *Peer) AddColumnsSQL(ctx context.Context, dir string, cols ...Assignment) (*WriteResult, error) {
	var a []string
	for _, c := range cols {
		a = append(a, "--sql", c.Column+"="+c.SQL)
	}
	return p.Exec(ctx, "add-columns", dir, a...)
}

// DropColumns drops columns.
func (p *Peer) DropColumns(ctx context.Context, dir string, cols ...string) (*WriteResult, error) {
	return p.Exec(ctx, "drop-columns", dir, cols...)
}

// Clone clones src (at version if non-zero) into dst; shallow unless deep.
func (p *Peer) Clone(ctx context.Context, src, dst string, version uint64, deep bool) (*WriteResult, error) {
	var a []string
	if version != 0 {
		a = append(a, "--version", strconv.FormatUint(version, 10))
	}
	if deep {
		a = append(a, "--deep")
	}
	return p.Exec(ctx, "clone", src, append([]string{dst}, a...)...)
}

// Script runs several commands on dir in one node process. Each step is an
// argv without DIR, e.g. {"delete", "--where", "id < 3"}. It returns each
// step's raw JSON result; on a Lance refusal the *LanceError's Step says which.
func (p *Peer) Script(ctx context.Context, dir string, steps [][]string) ([]json.RawMessage, error) {
	in, err := json.Marshal(steps)
	if err != nil {
		return nil, fmt.Errorf("peerlance: encoding script: %w", err)
	}
	out, err := p.RunInput(ctx, in, "script", dir)
	if err != nil {
		return nil, err
	}
	var r struct {
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, &DriverError{Args: []string{"script", dir}, Err: fmt.Errorf("decoding output: %w", err)}
	}
	return r.Results, nil
}
