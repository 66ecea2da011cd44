package snapshot

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
)

// now returns the dataset's clock reading (UTC).
func (d *Dataset) now() time.Time {
	if d.clock != nil {
		return d.clock().UTC()
	}
	return time.Now().UTC()
}

// SetClock replaces the clock used for ref timestamps and commits (tests).
// nil restores the wall clock.
func (d *Dataset) SetClock(clock func() time.Time) { d.clock = clock }

// GetTag reads one tag (§7.1). A missing tag wraps manifest.ErrRefNotFound.
func (d *Dataset) GetTag(ctx context.Context, name string) (Tag, error) {
	if err := ValidateTagName(name); err != nil {
		return Tag{}, err
	}
	data, err := d.st.Get(ctx, TagPath(name))
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Tag{}, fmt.Errorf("%w: tag %q does not exist in %s", manifest.ErrRefNotFound, name, d.uri)
		}
		return Tag{}, err
	}
	return DecodeTag(name, data)
}

// ListTags returns every tag of the dataset, sorted by name. Files in
// _refs/tags/ that are not *.json are ignored; a tag file that does not
// decode is an error naming it.
func (d *Dataset) ListTags(ctx context.Context) ([]Tag, error) {
	objs, err := d.st.List(ctx, TagsDir+"/", store.ListOptions{Shallow: true})
	if err != nil {
		return nil, err
	}
	var out []Tag
	for _, o := range objs {
		if o.IsDir {
			continue
		}
		name, ok := tagNameFromFile(strings.TrimPrefix(o.Key, TagsDir+"/"))
		if !ok {
			continue
		}
		data, err := d.st.Get(ctx, o.Key)
		if err != nil {
			return nil, err
		}
		t, err := DecodeTag(name, data)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// target resolves a ref to an existing version and returns its branch,
// version and manifest size. It reads the manifest but checks no flags:
// refs are JSON files only and never change a manifest (§6.5).
func (d *Dataset) target(ctx context.Context, ref Ref) (*Snapshot, error) {
	return d.load(ctx, ref)
}

// CreateTag creates tag name pointing at the version ref selects (the
// latest of its branch when ref.Version is 0), with createdAt = updatedAt =
// now and the manifest's size. The file is written with create-if-absent:
// an existing tag fails with an error wrapping manifest.ErrRefExists
// ("tag {name} already exists"). No manifest is written or changed.
func (d *Dataset) CreateTag(ctx context.Context, name string, ref Ref, metadata map[string]string) (Tag, error) {
	if err := ValidateTagName(name); err != nil {
		return Tag{}, err
	}
	s, err := d.target(ctx, ref)
	if err != nil {
		return Tag{}, err
	}
	now := d.now()
	t := Tag{Name: name, Branch: s.Branch, Version: s.Version, CreatedAt: now, UpdatedAt: now,
		ManifestSize: uint64(s.Size()), Metadata: copyMap(metadata)}
	if err := d.st.CreateIfAbsent(ctx, TagPath(name), EncodeTag(t)); err != nil {
		if errors.Is(err, store.ErrAlreadyExists) {
			return Tag{}, fmt.Errorf("%w: tag %s already exists", manifest.ErrRefExists, name)
		}
		return Tag{}, err
	}
	return t, nil
}

// UpdateTag points an existing tag at the version ref selects. createdAt
// and metadata are kept, updatedAt becomes now, manifestSize follows the
// new version. A missing tag wraps manifest.ErrRefNotFound.
func (d *Dataset) UpdateTag(ctx context.Context, name string, ref Ref) (Tag, error) {
	old, err := d.GetTag(ctx, name)
	if err != nil {
		return Tag{}, err
	}
	s, err := d.target(ctx, ref)
	if err != nil {
		return Tag{}, err
	}
	t := Tag{Name: name, Branch: s.Branch, Version: s.Version, CreatedAt: old.CreatedAt, UpdatedAt: d.now(),
		ManifestSize: uint64(s.Size()), Metadata: old.Metadata}
	if err := d.st.Put(ctx, TagPath(name), EncodeTag(t)); err != nil {
		return Tag{}, err
	}
	return t, nil
}

// DeleteTag removes a tag file. A missing tag wraps manifest.ErrRefNotFound.
func (d *Dataset) DeleteTag(ctx context.Context, name string) error {
	if err := ValidateTagName(name); err != nil {
		return err
	}
	if err := d.st.Delete(ctx, TagPath(name)); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%w: tag %q does not exist in %s", manifest.ErrRefNotFound, name, d.uri)
		}
		return err
	}
	return nil
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
