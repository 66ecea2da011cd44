package maint

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
)

// DeleteBranchResult reports a branch deletion.
type DeleteBranchResult struct {
	Branch       string   `json:"branch"`
	RemovedFiles []string `json:"removed_files"`
}

// DeleteBranch deletes branch name of the dataset in st (§7.2): first its
// ref file _refs/branches/{name}.json — from then on the branch does not
// exist for any reader — then every file of its tree (tree/{name}/), except
// the trees of other branches nested under that path (a branch "a/b" lives
// in tree/a/b). It refuses main, an unknown branch, a branch another branch
// forks from, and a branch a tag points into (the tag would dangle):
// errors wrap ErrBranch. A crash after the ref is gone leaves only
// unreachable files in the tree, which deleting again removes.
func DeleteBranch(ctx context.Context, st *store.Store, name string) (*DeleteBranchResult, error) {
	if name == "" || name == "main" {
		return nil, fmt.Errorf("%w: the main branch cannot be deleted", ErrBranch)
	}
	if err := snapshot.ValidateBranchName(name); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBranch, err)
	}
	d := snapshot.NewDataset(st.String(), st)
	branches, err := d.ListBranches(ctx)
	if err != nil {
		return nil, err
	}
	found := false
	var nested []string
	for _, b := range branches {
		if b.Name == name {
			found = true
			continue
		}
		if b.ParentBranch == name {
			return nil, fmt.Errorf("%w: branch %q is the parent of branch %q; delete that one first", ErrBranch, name, b.Name)
		}
		if strings.HasPrefix(b.Name, name+"/") {
			nested = append(nested, snapshot.BranchRoot(b.Name)+"/")
		}
	}
	if !found {
		return nil, fmt.Errorf("%w: branch %q not found", ErrBranch, name)
	}
	tags, err := d.ListTags(ctx)
	if err != nil {
		return nil, err
	}
	for _, tg := range tags {
		if tg.Branch == name {
			return nil, fmt.Errorf("%w: tag %q points at version %d of branch %q; delete the tag first", ErrBranch, tg.Name, tg.Version, name)
		}
	}
	if err := st.Delete(ctx, snapshot.BranchRefPath(name)); err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	res := &DeleteBranchResult{Branch: name}
	root := snapshot.BranchRoot(name) + "/"
	objs, err := st.List(ctx, root, store.ListOptions{})
	if err != nil {
		return res, err
	}
	for _, o := range objs {
		skip := false
		for _, n := range nested {
			if strings.HasPrefix(o.Key, n) {
				skip = true
			}
		}
		if skip || o.IsDir {
			continue
		}
		if err := st.Delete(ctx, o.Key); err != nil && !errors.Is(err, store.ErrNotFound) {
			return res, err
		}
		res.RemovedFiles = append(res.RemovedFiles, o.Key)
	}
	if st.Kind() == store.KindLocal {
		_ = st.PruneEmptyDirs(ctx, root)
	}
	return res, nil
}
