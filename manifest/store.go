package manifest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// Join returns the bucket key of rel (a slash-separated path relative to
// the dataset root) for a dataset rooted at root inside a bucket. root ""
// means the bucket itself is the dataset root.
func Join(root, rel string) string {
	root = strings.Trim(root, "/")
	if root == "" {
		return rel
	}
	return root + "/" + rel
}

// VersionInfo describes one manifest file found in _versions/.
type VersionInfo struct {
	Version uint64
	Scheme  NamingScheme
	// Path is the manifest's path relative to the dataset root
	// ("_versions/<name>").
	Path string
	// Size is the manifest file's size in bytes (-1 when unknown).
	Size int64
	// ModTime is the object's modification time as reported by the store.
	ModTime time.Time
}

// IsNotFound reports whether err is a not-found error of the blob store or
// matches ErrNotFound.
func IsNotFound(err error) bool {
	return errors.Is(err, ErrNotFound) || gcerrors.Code(err) == gcerrors.NotFound
}

// ListVersions lists the manifests of the dataset at root, ascending by
// version. Detached versions, the hint file, staging and temporary files
// are skipped. Names of both schemes in one directory are an error
// matching ErrMixedNaming. A dataset with no manifest returns an error
// matching ErrNotFound.
func ListVersions(ctx context.Context, b *blob.Bucket, root string) ([]VersionInfo, error) {
	prefix := Join(root, VersionsDir) + "/"
	it := b.List(&blob.ListOptions{Prefix: prefix, Delimiter: "/"})
	var out []VersionInfo
	var names []string
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", prefix, err)
		}
		if obj.IsDir {
			continue
		}
		name := strings.TrimPrefix(obj.Key, prefix)
		v, s, ok := ParseManifestName(name)
		if !ok || IsDetached(v) {
			continue
		}
		names = append(names, name)
		out = append(out, VersionInfo{Version: v, Scheme: s, Path: VersionsDir + "/" + name, Size: obj.Size, ModTime: obj.ModTime})
	}
	if _, err := DetectScheme(names); err != nil {
		return nil, fmt.Errorf("%s: %w", prefix, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no manifest files: %w", prefix, ErrNotFound)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// ReadHint reads _versions/latest_version_hint.json.
func ReadHint(ctx context.Context, b *blob.Bucket, root string) (uint64, error) {
	key := Join(root, VersionsDir+"/"+HintName)
	data, err := b.ReadAll(ctx, key)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", key, err)
	}
	return DecodeHint(key, data)
}

// WriteHint overwrites _versions/latest_version_hint.json with the exact
// bytes Lance writes. It is best-effort by nature: the hint is never
// authoritative.
func WriteHint(ctx context.Context, b *blob.Bucket, root string, version uint64) error {
	key := Join(root, VersionsDir+"/"+HintName)
	if err := b.WriteAll(ctx, key, EncodeHint(version), &blob.WriterOptions{ContentType: "application/json"}); err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	return nil
}

// stat returns the VersionInfo of version under scheme, or an error
// matching ErrNotFound when that manifest does not exist.
func stat(ctx context.Context, b *blob.Bucket, root string, scheme NamingScheme, version uint64) (VersionInfo, error) {
	rel := ManifestPath(scheme, version)
	attrs, err := b.Attributes(ctx, Join(root, rel))
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			return VersionInfo{}, fmt.Errorf("%s: %w", Join(root, rel), ErrNotFound)
		}
		return VersionInfo{}, fmt.Errorf("stat %s: %w", Join(root, rel), err)
	}
	return VersionInfo{Version: version, Scheme: scheme, Path: rel, Size: attrs.Size, ModTime: attrs.ModTime}, nil
}

// LatestVersion finds the newest non-detached version of the dataset at
// root (lance-table-format.md §4.3). It tries the latest-version hint first:
// the hinted manifest must exist (V2 name, else V1 name), and then v+1,
// v+2, … are probed until one is missing, so a stale hint cannot hide newer
// versions. A missing or unreadable hint, a hint pointing at a missing
// manifest, a hint MaxHintProbes or more versions behind (hints are
// written only on local stores, so one left on an object store by an older
// writer would otherwise cost a probe per version committed since), or any
// error on that path falls back to the listing (latestByListing), which is
// authoritative.
func LatestVersion(ctx context.Context, b *blob.Bucket, root string) (VersionInfo, error) {
	if info, err := latestFromHint(ctx, b, root); err == nil {
		return info, nil
	} else if ctx.Err() != nil {
		return VersionInfo{}, ctx.Err()
	}
	return latestByListing(ctx, b, root)
}

// latestByListing finds the latest version by listing _versions/ (§4.3,
// lexically ordered listing): blob.List returns keys in lexicographical
// order on every store, and a V2 name is u64::MAX − v zero-padded, so when
// the first manifest name listed is a V2 name it is the newest version and
// the listing stops there — one list request whatever the number of
// versions, as Lance 12 does on such stores. When the first name is a V1
// name (unpadded decimal, not ordered by version) every page is read and
// the highest version taken; that full listing also reports a directory
// mixing both schemes (ErrMixedNaming), as ListVersions does.
func latestByListing(ctx context.Context, b *blob.Bucket, root string) (VersionInfo, error) {
	prefix := Join(root, VersionsDir) + "/"
	it := b.List(&blob.ListOptions{Prefix: prefix, Delimiter: "/"})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return VersionInfo{}, fmt.Errorf("list %s: %w", prefix, err)
		}
		if obj.IsDir {
			continue
		}
		name := strings.TrimPrefix(obj.Key, prefix)
		v, s, ok := ParseManifestName(name)
		if !ok || IsDetached(v) {
			continue
		}
		if s != V2 {
			break
		}
		return VersionInfo{Version: v, Scheme: s, Path: VersionsDir + "/" + name, Size: obj.Size, ModTime: obj.ModTime}, nil
	}
	all, err := ListVersions(ctx, b, root)
	if err != nil {
		return VersionInfo{}, err
	}
	return all[len(all)-1], nil
}

// MaxHintProbes bounds the versions LatestVersion probes past the hinted
// one before it lists _versions/ instead.
const MaxHintProbes = 8

// errHintTooStale: the hint lags MaxHintProbes or more versions behind.
var errHintTooStale = errors.New("latest-version hint is too far behind")

func latestFromHint(ctx context.Context, b *blob.Bucket, root string) (VersionInfo, error) {
	v, err := ReadHint(ctx, b, root)
	if err != nil {
		return VersionInfo{}, err
	}
	if v == 0 || IsDetached(v) {
		return VersionInfo{}, fmt.Errorf("hint names version %d: %w", v, ErrCorrupt)
	}
	cur, err := stat(ctx, b, root, V2, v)
	if IsNotFound(err) {
		cur, err = stat(ctx, b, root, V1, v)
	}
	if err != nil {
		return VersionInfo{}, err
	}
	for probes := 0; cur.Version < math.MaxInt64; probes++ {
		if probes == MaxHintProbes {
			return VersionInfo{}, fmt.Errorf("hint names version %d: %w", v, errHintTooStale)
		}
		next, err := stat(ctx, b, root, cur.Scheme, cur.Version+1)
		if IsNotFound(err) {
			return cur, nil
		}
		if err != nil {
			return VersionInfo{}, err
		}
		cur = next
	}
	return cur, nil
}

// ReadFile reads and decodes the manifest file at key (a full bucket key).
func ReadFile(ctx context.Context, b *blob.Bucket, key string) (*File, error) {
	data, err := b.ReadAll(ctx, key)
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil, fmt.Errorf("%s: %w", key, ErrNotFound)
		}
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	return Decode(key, data)
}

// ReadVersion reads the manifest of version: the V2 name first, then the V1
// name (§4.3); detached versions use their "d…" name. A version that exists
// under neither name returns an error matching ErrNotFound.
func ReadVersion(ctx context.Context, b *blob.Bucket, root string, version uint64) (*File, error) {
	if IsDetached(version) {
		return ReadFile(ctx, b, Join(root, ManifestPath(V2, version)))
	}
	f, err := ReadFile(ctx, b, Join(root, ManifestPath(V2, version)))
	if err == nil || !IsNotFound(err) {
		return f, err
	}
	f, err = ReadFile(ctx, b, Join(root, ManifestPath(V1, version)))
	if IsNotFound(err) {
		return nil, fmt.Errorf("%s: version %d: %w", Join(root, VersionsDir), version, ErrNotFound)
	}
	return f, err
}

// ReadInfo reads the manifest a VersionInfo (from ListVersions or
// LatestVersion) describes.
func ReadInfo(ctx context.Context, b *blob.Bucket, root string, info VersionInfo) (*File, error) {
	return ReadFile(ctx, b, Join(root, info.Path))
}

// LoadLatest finds the latest version and reads it: the manifest
// LatestVersion would name, in fewer requests. With a hint naming version v
// it reads v's manifest (which proves v exists — no separate stat) while it
// stats v+1 (which must be missing for v to be the latest; the hint is never
// trusted alone, §4.5): three requests with the hint file's read on a
// current hint. Otherwise it falls back as LatestVersion does.
func LoadLatest(ctx context.Context, b *blob.Bucket, root string) (*File, VersionInfo, error) {
	if f, info, err := loadFromHint(ctx, b, root); err == nil {
		return f, info, nil
	} else if ctx.Err() != nil {
		return nil, VersionInfo{}, ctx.Err()
	}
	info, err := latestByListing(ctx, b, root)
	if err != nil {
		return nil, VersionInfo{}, err
	}
	f, err := ReadInfo(ctx, b, root, info)
	if err != nil {
		return nil, VersionInfo{}, err
	}
	return f, info, nil
}

// loadFromHint is LoadLatest's hint path: the hinted manifest is read (V2
// name, else V1 name) concurrently with the stat of the V2 name of v+1;
// when v+1 exists (a stale hint) the probing goes on as in latestFromHint
// and the newest manifest found is read.
func loadFromHint(ctx context.Context, b *blob.Bucket, root string) (*File, VersionInfo, error) {
	v, err := ReadHint(ctx, b, root)
	if err != nil {
		return nil, VersionInfo{}, err
	}
	if v == 0 || IsDetached(v) || v+1 >= math.MaxInt64 {
		return nil, VersionInfo{}, fmt.Errorf("hint names version %d: %w", v, ErrCorrupt)
	}
	type probe struct {
		info VersionInfo
		err  error
	}
	next := make(chan probe, 1)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		info, err := stat(pctx, b, root, V2, v+1)
		next <- probe{info, err}
	}()
	scheme := V2
	f, err := ReadFile(ctx, b, Join(root, ManifestPath(V2, v)))
	if IsNotFound(err) {
		scheme = V1
		f, err = ReadFile(ctx, b, Join(root, ManifestPath(V1, v)))
	}
	if err != nil {
		return nil, VersionInfo{}, err
	}
	p := <-next
	if scheme == V1 {
		p.info, p.err = stat(ctx, b, root, V1, v+1)
	}
	if IsNotFound(p.err) {
		rel := ManifestPath(scheme, v)
		return f, VersionInfo{Version: v, Scheme: scheme, Path: rel, Size: f.Size}, nil
	}
	if p.err != nil {
		return nil, VersionInfo{}, p.err
	}
	cur := p.info
	for probes := 1; cur.Version < math.MaxInt64; probes++ {
		if probes == MaxHintProbes {
			return nil, VersionInfo{}, fmt.Errorf("hint names version %d: %w", v, errHintTooStale)
		}
		n, err := stat(ctx, b, root, cur.Scheme, cur.Version+1)
		if IsNotFound(err) {
			break
		}
		if err != nil {
			return nil, VersionInfo{}, err
		}
		cur = n
	}
	f, err = ReadInfo(ctx, b, root, cur)
	if err != nil {
		return nil, VersionInfo{}, err
	}
	return f, cur, nil
}
