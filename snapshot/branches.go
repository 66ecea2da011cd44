package snapshot

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/lancekeeper/lancekeeper/store"
)

// GetBranch reads one branch ref (§7.2). A missing ref wraps ErrRefNotFound.
func (d *Dataset) GetBranch(ctx context.Context, name string) (Branch, error) {
	name = normBranch(name)
	if err := ValidateBranchName(name); err != nil {
		return Branch{}, err
	}
	data, err := d.st.Get(ctx, BranchRefPath(name))
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Branch{}, fmt.Errorf("%w: branch %q does not exist in %s", ErrRefNotFound, name, d.uri)
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
