package snapshot

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
)

// GetBranch reads one branch ref (§7.2). A missing ref wraps manifest.ErrRefNotFound.
func (d *Dataset) GetBranch(ctx context.Context, name string) (Branch, error) {
	name = normBranch(name)
	if err := ValidateBranchName(name); err != nil {
		return Branch{}, err
	}
	data, err := d.st.Get(ctx, BranchRefPath(name))
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Branch{}, fmt.Errorf("%w: branch %q does not exist in %s", manifest.ErrRefNotFound, name, d.uri)
		}
		return Branch{}, err
	}
	return DecodeBranch(name, data)
}

// ListBranches returns every branch ref of the dataset, sorted by name.
// Files in _refs/branches/ that are not *.json are ignored; a ref file that
// does not decode is an error naming it.
func (d *Dataset) ListBranches(ctx context.Context) ([]Branch, error) {
	objs, err := d.st.List(ctx, BranchesDir+"/", store.ListOptions{Shallow: true})
	if err != nil {
		return nil, err
	}
	var out []Branch
	for _, o := range objs {
		if o.IsDir {
			continue
		}
		name, ok := branchNameFromRefFile(strings.TrimPrefix(o.Key, BranchesDir+"/"))
		if !ok {
			continue
		}
		data, err := d.st.Get(ctx, o.Key)
		if err != nil {
			return nil, err
		}
		br, err := DecodeBranch(name, data)
		if err != nil {
			return nil, err
		}
		out = append(out, br)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// maxBranchDepth bounds how far lineage follows parent branches, so refs
// forming a cycle (hostile or corrupt) cannot loop forever.
const maxBranchDepth = 256

// lineage returns a branch's version mapping (§7.2 identifier): main's is
// empty; a branch's is its ref's identifier, or, for a legacy ref without
// one, its parent's lineage plus [parentVersion, a deterministic id derived
// from the branch name].
func (d *Dataset) lineage(ctx context.Context, branch string) ([]VersionMapping, error) {
	var chain []Branch
	for b := normBranch(branch); b != ""; {
		if len(chain) >= maxBranchDepth {
			return nil, fmt.Errorf("%w: branch %q: parent chain longer than %d (a cycle?)", ErrInvalidRef, branch, maxBranchDepth)
		}
		br, err := d.GetBranch(ctx, b)
		if err != nil {
			return nil, err
		}
		chain = append(chain, br)
		if br.HasIdentifier {
			break
		}
		b = normBranch(br.ParentBranch)
	}
	var out []VersionMapping
	for i := len(chain) - 1; i >= 0; i-- {
		br := chain[i]
		if br.HasIdentifier {
			out = append([]VersionMapping(nil), br.Identifier...)
			continue
		}
		id := uuid.NewSHA1(uuid.NameSpaceURL, []byte("lance-branch:"+br.Name))
		out = append(out, VersionMapping{Version: br.ParentVersion, ID: simpleUUID(id)})
	}
	return out, nil
}

func simpleUUID(u uuid.UUID) string { return hex.EncodeToString(u[:]) }

// BranchOptions configure CreateBranch.
type BranchOptions struct {
	// Metadata is stored in the branch ref.
	Metadata map[string]string
	// Commit tunes the branch's first commit (retries, unsafe stores, clock).
	Commit commit.Options
}

// CreateBranch creates branch name from the version from selects (latest
// of its branch when from.Version is 0). As Lance does (§7.2), the branch
// data is a shallow clone of the parent in tree/{name}/ whose first
// manifest keeps the parent's version number and sets Manifest.branch; its
// base path points at the parent's root (name = parent branch, absent for
// main), so it gains bit 4 and carries the parent's sticky bits (R57). The
// ref file _refs/branches/{name}.json is written second, with
// create-if-absent, and is the source of truth. The parent is never
// written.
func (d *Dataset) CreateBranch(ctx context.Context, name string, from Ref, opts BranchOptions) (Branch, *Snapshot, error) {
	if err := ValidateBranchName(name); err != nil {
		return Branch{}, nil, err
	}
	if ok, err := d.st.Exists(ctx, BranchRefPath(name)); err != nil {
		return Branch{}, nil, err
	} else if ok {
		return Branch{}, nil, fmt.Errorf("%w: branch %s already exists", manifest.ErrRefExists, name)
	}
	src, err := d.Checkout(ctx, Options{Ref: from})
	if err != nil {
		return Branch{}, nil, err
	}
	mapping, err := d.lineage(ctx, src.Branch)
	if err != nil {
		return Branch{}, nil, err
	}
	refPath, err := d.branchRootPath(src.Branch)
	if err != nil {
		return Branch{}, nil, err
	}
	bst, err := d.BranchStore(name)
	if err != nil {
		return Branch{}, nil, err
	}
	bn := name
	spec := commit.CloneSpec{
		Source:        src.Manifest(),
		SourceIndices: src.Indices(),
		SourcePrelude: src.File.Prelude,
		Shallow:       true,
		RefVersion:    src.Version,
		RefPath:       refPath,
		BranchName:    &bn,
	}
	if src.Branch != "" {
		p := src.Branch
		spec.RefName = &p
	}
	copts := opts.Commit
	if copts.Now == nil {
		copts.Now = d.now
	}
	if _, err := commit.Commit(ctx, bst, commit.NewClone(spec), copts); err != nil {
		if errors.Is(err, commit.ErrDatasetExists) {
			return Branch{}, nil, fmt.Errorf("%w: branch %s: %s already holds versions but has no ref file (left by an interrupted create?); remove that directory or pick another name: %w",
				manifest.ErrRefExists, name, BranchRoot(name), err)
		}
		return Branch{}, nil, fmt.Errorf("create branch %s from %s: %w", name, from, err)
	}
	br := Branch{
		Name:          name,
		ParentBranch:  src.Branch,
		Identifier:    append(mapping, VersionMapping{Version: src.Version, ID: simpleUUID(uuid.New())}),
		HasIdentifier: true,
		ParentVersion: src.Version,
		CreateAt:      d.now().Unix(),
		ManifestSize:  uint64(src.Size()),
		Metadata:      copyMap(opts.Metadata),
	}
	if err := d.st.CreateIfAbsent(ctx, BranchRefPath(name), EncodeBranch(br)); err != nil {
		if errors.Is(err, store.ErrAlreadyExists) {
			return Branch{}, nil, fmt.Errorf("%w: branch %s already exists", manifest.ErrRefExists, name)
		}
		return Branch{}, nil, err
	}
	s, err := d.load(ctx, Ref{Branch: name, Version: src.Version})
	if err != nil {
		return Branch{}, nil, err
	}
	return br, s, nil
}
