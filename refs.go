package lancekeeper

import (
	"context"
	"time"

	"github.com/lancekeeper/lancekeeper/snapshot"
)

// Tag is a named pointer at a version (lance-table-format.md §7.1), in the
// file format Lance 12 reads and writes.
type Tag struct {
	Name    string
	Branch  string // "" for main
	Version uint64
	// CreatedAt and UpdatedAt are zero when unknown.
	CreatedAt, UpdatedAt time.Time
	Metadata             map[string]string
}

func tagOf(t snapshot.Tag) Tag {
	return Tag{Name: t.Name, Branch: t.Branch, Version: t.Version, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, Metadata: t.Metadata}
}

// Tags manages the tags of a dataset; Dataset.Tags returns it. Tags live
// at the main root whatever the branch of the handle.
type Tags struct{ d *Dataset }

// Tags returns the tag manager of the dataset. Create and Update default
// to this handle's version and branch.
func (d *Dataset) Tags() *Tags { return &Tags{d: d} }

// target is the ref of version v on the handle's branch (0: the handle's
// version).
func (t *Tags) target(v uint64) snapshot.Ref {
	if v == 0 {
		v = t.d.snap.Version
	}
	return snapshot.Ref{Version: v, Branch: t.d.snap.Branch}
}

// List returns every tag, sorted by name.
func (t *Tags) List(ctx context.Context) ([]Tag, error) {
	ts, err := t.d.h.ds.ListTags(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Tag, len(ts))
	for i, x := range ts {
		out[i] = tagOf(x)
	}
	return out, nil
}

// Get reads one tag; a missing tag matches ErrRefNotFound.
func (t *Tags) Get(ctx context.Context, name string) (Tag, error) {
	x, err := t.d.h.ds.GetTag(ctx, name)
	return tagOf(x), err
}

// Create tags version (0: the handle's version) of the handle's branch.
// An existing tag matches ErrRefExists. No version is written.
func (t *Tags) Create(ctx context.Context, name string, version uint64) (Tag, error) {
	x, err := t.d.h.ds.CreateTag(ctx, name, t.target(version), nil)
	return tagOf(x), err
}

// Update points an existing tag at version (0: the handle's version) of
// the handle's branch; a missing tag matches ErrRefNotFound.
func (t *Tags) Update(ctx context.Context, name string, version uint64) (Tag, error) {
	x, err := t.d.h.ds.UpdateTag(ctx, name, t.target(version))
	return tagOf(x), err
}

// Delete removes a tag (never a version); a missing tag matches
// ErrRefNotFound.
func (t *Tags) Delete(ctx context.Context, name string) error {
	return t.d.h.ds.DeleteTag(ctx, name)
}

// Branch is a line of versions forked from another branch
// (lance-table-format.md §7.2), as Lance 12 records it.
type Branch struct {
	Name string
	// Parent is the branch forked from ("" for main) and ParentVersion the
	// version forked at.
	Parent        string
	ParentVersion uint64
	// CreatedAt is zero when unknown.
	CreatedAt time.Time
	Metadata  map[string]string
}

func branchOf(b snapshot.Branch) Branch {
	out := Branch{Name: b.Name, Parent: b.ParentBranch, ParentVersion: b.ParentVersion, Metadata: b.Metadata}
	if b.CreateAt != 0 {
		out.CreatedAt = time.Unix(b.CreateAt, 0).UTC()
	}
	return out
}

// Branches manages the branches of a dataset; Dataset.Branches returns it.
type Branches struct{ d *Dataset }

// Branches returns the branch manager of the dataset. Create forks from
// this handle's branch.
func (d *Dataset) Branches() *Branches { return &Branches{d: d} }

// List returns every branch, sorted by name.
func (b *Branches) List(ctx context.Context) ([]Branch, error) {
	bs, err := b.d.h.ds.ListBranches(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Branch, len(bs))
	for i, x := range bs {
		out[i] = branchOf(x)
	}
	return out, nil
}

// Get reads one branch; a missing branch matches ErrRefNotFound.
func (b *Branches) Get(ctx context.Context, name string) (Branch, error) {
	x, err := b.d.h.ds.GetBranch(ctx, name)
	return branchOf(x), err
}

// Create forks branch name from version (0: the handle's version) of the
// handle's branch, as Lance does: a shallow clone in tree/{name}/ whose
// first version keeps the parent's number. It returns that version; write
// to the branch through it. An existing branch matches ErrRefExists.
func (b *Branches) Create(ctx context.Context, name string, version uint64) (*Dataset, error) {
	if version == 0 {
		version = b.d.snap.Version
	}
	from := snapshot.Ref{Version: version, Branch: b.d.snap.Branch}
	_, snap, err := b.d.h.ds.CreateBranch(ctx, name, from, snapshot.BranchOptions{Commit: b.d.h.commitOptions()})
	if err != nil {
		return nil, err
	}
	return &Dataset{h: b.d.h, snap: snap}, nil
}
