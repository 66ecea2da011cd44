package snapshot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

// ErrBadOptions is wrapped when a combination of options makes no sense
// (e.g. both a version and a tag).
var ErrBadOptions = errors.New("invalid snapshot options")

// Ref selects a point in a dataset's history: the latest version of a
// branch, a numbered version of a branch, or a tag (which names its own
// branch and version). The zero Ref is the latest version of main.
type Ref struct {
	// Version is the version to select; 0 means the latest.
	Version uint64
	// Tag selects the tagged version (and its branch). It cannot be
	// combined with Version; with Branch only when they agree.
	Tag string
	// Branch is the branch to read; "" and "main" are the main line.
	Branch string
}

// String renders the ref for messages ("main@latest", "dev@3", "tag v1").
func (r Ref) String() string {
	if r.Tag != "" {
		return "tag " + r.Tag
	}
	b := normBranch(r.Branch)
	if b == "" {
		b = MainBranch
	}
	if r.Version == 0 {
		return b + "@latest"
	}
	return fmt.Sprintf("%s@%d", b, r.Version)
}

func normBranch(b string) string {
	if b == MainBranch {
		return ""
	}
	return b
}

// Options says what to open and for what.
type Options struct {
	Ref
	// ForWrite also applies the writer check: unknown writer bits are
	// refused (§6.3). A read-only open ignores the writer word except for
	// half-set paired bits.
	ForWrite bool
}

// Dataset is a Lance dataset addressed by its main root. It reads refs and
// versions and derives new ones; it holds no cached state besides the
// store, so every call sees the current storage.
type Dataset struct {
	uri   string // as given
	st    *store.Store
	owned bool
	clock func() time.Time // nil: wall clock
}

// OpenDataset opens the store of the dataset whose main root is uri (a
// local path, file://, s3://, gs://, azblob:// or mem:// URL). Nothing is
// read or written yet.
func OpenDataset(ctx context.Context, uri string) (*Dataset, error) {
	st, err := store.Open(ctx, uri)
	if err != nil {
		return nil, err
	}
	return &Dataset{uri: uri, st: st, owned: true}, nil
}

// NewDataset wraps a store the caller opened (its root is the dataset's
// main root); uri is how the dataset is addressed (recorded in base paths
// of shallow clones and branches). Close does not close st.
func NewDataset(uri string, st *store.Store) *Dataset {
	return &Dataset{uri: uri, st: st}
}

// URI returns the dataset's address as given.
func (d *Dataset) URI() string { return d.uri }

// Store returns the store rooted at the main dataset root.
func (d *Dataset) Store() *store.Store { return d.st }

// Close releases the store if OpenDataset opened it.
func (d *Dataset) Close() error {
	if d.owned {
		return d.st.Close()
	}
	return nil
}

// branchRootKey returns the bucket key prefix (no trailing '/') of a
// branch's dataset root, as the manifest package's root argument.
func (d *Dataset) branchRootKey(branch string) string {
	root := strings.TrimSuffix(d.st.KeyPrefix(), "/")
	if br := BranchRoot(branch); br != "" {
		if root == "" {
			return br
		}
		return root + "/" + br
	}
	return root
}

// BranchStore returns a store rooted at a branch's dataset root (the main
// root's store for main).
func (d *Dataset) BranchStore(branch string) (*store.Store, error) {
	branch = normBranch(branch)
	if branch == "" {
		return d.st, nil
	}
	if err := ValidateBranchName(branch); err != nil {
		return nil, err
	}
	return d.st.Sub(BranchRoot(branch))
}

// Snapshot is one version of a dataset (on main or a branch), with its
// decoded manifest file. It is immutable.
type Snapshot struct {
	// Dataset is the dataset the snapshot belongs to.
	Dataset *Dataset
	// Branch is the branch of the version ("" for main).
	Branch string
	// Version is the manifest's version.
	Version uint64
	// Tag is the tag the snapshot was opened by, if any.
	Tag string
	// Path is the manifest's key relative to the branch root
	// ("_versions/<name>").
	Path string
	// File is the decoded manifest file (manifest, index section, inline
	// transaction); Size its byte size.
	File *manifest.File
}

// Manifest returns the manifest message.
func (s *Snapshot) Manifest() *pb.Manifest { return s.File.Manifest }

// Indices returns the index list of the manifest's index section.
func (s *Snapshot) Indices() []*pb.IndexMetadata { return s.File.Indices() }

// Size returns the manifest file's size in bytes.
func (s *Snapshot) Size() int64 { return s.File.Size }

// Open opens the dataset at uri at the version opts selects and checks its
// feature flags (§6.3): a reader refuses unknown reader bits and half-set
// paired bits; with opts.ForWrite also unknown writer bits. The error wraps
// flags.ErrUnsupported or flags.ErrHalfSet and names the bits. Open never
// writes. Close the snapshot's Dataset when done.
func Open(ctx context.Context, uri string, opts Options) (*Snapshot, error) {
	d, err := OpenDataset(ctx, uri)
	if err != nil {
		return nil, err
	}
	s, err := d.Checkout(ctx, opts)
	if err != nil {
		d.Close()
		return nil, err
	}
	return s, nil
}

// Checkout opens the version opts selects, with the flag checks of Open.
func (d *Dataset) Checkout(ctx context.Context, opts Options) (*Snapshot, error) {
	s, err := d.load(ctx, opts.Ref)
	if err != nil {
		return nil, err
	}
	if err := CheckFlags(s.Manifest(), opts.ForWrite); err != nil {
		return nil, fmt.Errorf("open %s at %s (version %d): %w", d.uri, opts.Ref, s.Version, err)
	}
	return s, nil
}

// CheckFlags applies the read check, and for a writer also the write check,
// to a manifest's flag words (§6.3, R55, R59).
func CheckFlags(m *pb.Manifest, forWrite bool) error {
	r, w := m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags()
	if err := flags.CheckRead(r, w); err != nil {
		return err
	}
	if forWrite {
		return flags.CheckWrite(r, w)
	}
	return nil
}

// resolve turns a Ref into (branch, version, tag); version 0 stays "latest".
func (d *Dataset) resolve(ctx context.Context, ref Ref) (branch string, version uint64, err error) {
	branch = normBranch(ref.Branch)
	if ref.Tag == "" {
		if branch != "" {
			if err := ValidateBranchName(branch); err != nil {
				return "", 0, err
			}
		}
		return branch, ref.Version, nil
	}
	if ref.Version != 0 {
		return "", 0, fmt.Errorf("%w: give a version or a tag, not both (version %d, tag %q)", ErrBadOptions, ref.Version, ref.Tag)
	}
	tag, err := d.GetTag(ctx, ref.Tag)
	if err != nil {
		return "", 0, err
	}
	if ref.Branch != "" && normBranch(ref.Branch) != tag.Branch {
		return "", 0, fmt.Errorf("%w: tag %q points at branch %q, not %q", ErrBadOptions, ref.Tag, branchLabel(tag.Branch), ref.Branch)
	}
	return tag.Branch, tag.Version, nil
}

func branchLabel(b string) string {
	if b == "" {
		return MainBranch
	}
	return b
}

// load reads the manifest a ref selects, without any flag check.
func (d *Dataset) load(ctx context.Context, ref Ref) (*Snapshot, error) {
	branch, version, err := d.resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	if branch != "" {
		if _, err := d.GetBranch(ctx, branch); err != nil {
			return nil, err
		}
	}
	root := d.branchRootKey(branch)
	b := d.st.Bucket()
	var f *manifest.File
	if version == 0 {
		var info manifest.VersionInfo
		f, info, err = manifest.LoadLatest(ctx, b, root)
		if err != nil {
			return nil, fmt.Errorf("open %s (branch %s): %w", d.uri, branchLabel(branch), err)
		}
		version = info.Version
	} else {
		f, err = manifest.ReadVersion(ctx, b, root, version)
		if err != nil {
			return nil, fmt.Errorf("open %s (branch %s) at version %d: %w", d.uri, branchLabel(branch), version, err)
		}
	}
	if got := f.Manifest.GetVersion(); got != version {
		return nil, fmt.Errorf("%w: %s: manifest file of version %d says version %d", manifest.ErrCorrupt, f.Name, version, got)
	}
	rel := strings.TrimPrefix(f.Name, root)
	rel = strings.TrimPrefix(rel, "/")
	return &Snapshot{Dataset: d, Branch: branch, Version: version, Tag: ref.Tag, Path: rel, File: f}, nil
}

// Versions lists the versions of a branch ("" for main), ascending.
func (d *Dataset) Versions(ctx context.Context, branch string) ([]manifest.VersionInfo, error) {
	branch = normBranch(branch)
	if branch != "" {
		if _, err := d.GetBranch(ctx, branch); err != nil {
			return nil, err
		}
	}
	return manifest.ListVersions(ctx, d.st.Bucket(), d.branchRootKey(branch))
}

// branchRootPath returns the address (as RootPath) of a branch's root.
func (d *Dataset) branchRootPath(branch string) (string, error) {
	root, err := store.RootPath(d.uri)
	if err != nil {
		return "", err
	}
	if br := BranchRoot(branch); br != "" {
		root += "/" + br
	}
	return root, nil
}
