package commit

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/seedio"
	"google.golang.org/protobuf/proto"
)

// HasZoneWriteSeeds reports whether a manifest carries FLAG_ZONE_WRITE_SEEDS
// in both flag words (R53).
func HasZoneWriteSeeds(m *pb.Manifest) bool {
	return m != nil && flags.Has(m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags(), flags.ZoneWriteSeeds)
}

// DataFileCarriesV1Seed reports whether the data file at key (relative to
// the store root) has at least one seed locator whose buffer is a version 1
// seed (zone-seeds.md R17). The version is read from the seed's IPC schema
// metadata before any other validation, so a v1 seed that is otherwise
// malformed still counts (the flag must then be set, R54); buffers that are
// not seeds at all, or v0 seeds, do not.
func DataFileCarriesV1Seed(ctx context.Context, st Store, key string) (bool, error) {
	f, err := datafile.Open(ctx, st.Bucket(), st.KeyPrefix()+key, datafile.OpenOptions{})
	if err != nil {
		return false, fmt.Errorf("inspect %s for zone write seeds: %w", key, err)
	}
	return dataFileCarriesV1Seed(ctx, f, key)
}

// dataFileCarriesV1Seed is DataFileCarriesV1Seed on an opened file.
func dataFileCarriesV1Seed(ctx context.Context, f *datafile.File, key string) (bool, error) {
	keys := make([]string, 0)
	for k := range f.Metadata() {
		if strings.HasPrefix(k, seedio.LocatorKeyPrefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		loc, err := seedio.ParseLocator(f.Metadata()[k])
		if err != nil || int(loc.BufferIndex) >= len(f.GlobalBuffers()) {
			continue // not a usable locator: no seed (R63)
		}
		buf, err := f.GlobalBuffer(ctx, int(loc.BufferIndex))
		if err != nil {
			return false, fmt.Errorf("inspect %s for zone write seeds: %w", key, err)
		}
		// Decoding as if the table were unflagged stops with E26 right after
		// reading the version of a v1 seed.
		_, err = seedio.Decode(buf, seedio.DecodeOptions{RowsPerZone: loc.RowsPerZone, NumRows: f.NumRows()})
		if errors.Is(err, seedio.ErrSeedV1WithoutFlag) {
			return true, nil
		}
	}
	return false, nil
}

// zoneMapDetailsURL is the type URL of ZoneMap index details.
const zoneMapDetailsURL = "/lance.table.ZoneMapIndexDetails"

// DeclaredSeedColumns returns the top-level columns for which ZoneMap
// index segments of the manifest ask writers to embed seeds in new data
// files, with the rows per zone each asks for: segments whose details are
// /lance.table.ZoneMapIndexDetails (type URL compared case-insensitively)
// with use_seeds set and a non-zero rows_per_zone, keyed by their first
// field id, which must name a top-level field. This is the rule Lance 12's
// writer follows (zone-seeds.md §3.1). When several segments name one
// column the first one in the index section wins.
func DeclaredSeedColumns(m *pb.Manifest, indices []*pb.IndexMetadata) map[string]uint64 {
	top := map[int32]string{}
	for _, f := range m.GetFields() {
		if f.GetParentId() == -1 {
			top[f.GetId()] = f.GetName()
		}
	}
	var out map[string]uint64
	for _, idx := range indices {
		if !strings.EqualFold(idx.GetIndexDetails().GetTypeUrl(), zoneMapDetailsURL) || len(idx.GetFields()) == 0 {
			continue
		}
		var d pb.ZoneMapIndexDetails
		if err := proto.Unmarshal(idx.GetIndexDetails().GetValue(), &d); err != nil || !d.GetUseSeeds() || d.GetRowsPerZone() == 0 {
			continue
		}
		name, ok := top[idx.GetFields()[0]]
		if !ok {
			continue
		}
		if _, dup := out[name]; dup {
			continue
		}
		if out == nil {
			out = map[string]uint64{}
		}
		out[name] = d.GetRowsPerZone()
	}
	return out
}

// inspectSeeds opens every new data file of t whose seed status is not
// known yet and records whether it carries a v1 seed.
func inspectSeeds(ctx context.Context, d *dataset, t *Transaction) error {
	for _, f := range newFragments(t.msg) {
		for _, df := range f.GetFiles() {
			if _, known := t.seedFiles[df.GetPath()]; known {
				continue
			}
			if df.BaseId != nil {
				return fmt.Errorf("%w: new data file %s lives in base path %d; mark its zone write seeds with MarkSeedFiles", ErrInvalidTransaction, df.GetPath(), df.GetBaseId())
			}
			v1, err := DataFileCarriesV1Seed(ctx, d.st, manifest.DataDir+"/"+df.GetPath())
			if err != nil {
				return err
			}
			t.seedFiles[df.GetPath()] = v1
		}
	}
	return nil
}

// seedDecision says whether the manifest this attempt writes references v1
// seeds for the first time or again (R54, Q18), and refuses the commit when
// the new data files carry v1 seeds but neither the caller opted in nor the
// latest manifest already carries the pair (R56).
func seedDecision(t *Transaction, prev *pb.Manifest, opts Options) (bool, error) {
	var v1 []string
	for _, f := range newFragments(t.msg) {
		for _, df := range f.GetFiles() {
			if t.seedFiles[df.GetPath()] {
				v1 = append(v1, df.GetPath())
			}
		}
	}
	if len(v1) == 0 {
		return false, nil
	}
	if !opts.EnableZoneWriteSeeds && !HasZoneWriteSeeds(prev) {
		return false, fmt.Errorf("%w: %d new data file(s) carry v1 seeds (first: data/%s) but the dataset's manifest does not set FLAG_ZONE_WRITE_SEEDS; enable it explicitly (`lancekeeper seeds enable`, or the EnableZoneWriteSeeds option)",
			ErrSeedsNotEnabled, len(v1), v1[0])
	}
	return true, nil
}

// EnableZoneWriteSeeds commits the explicit activation of
// FLAG_ZONE_WRITE_SEEDS (NewEnableZoneWriteSeeds) on top of the latest
// version. When the latest manifest already carries both bits nothing is
// written and already is true.
func EnableZoneWriteSeeds(ctx context.Context, st Store, opts Options) (res *Result, already bool, err error) {
	info, err := manifest.LatestVersion(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		if manifest.IsNotFound(err) {
			return nil, false, fmt.Errorf("%w: %s has no manifest", ErrDatasetNotFound, st)
		}
		return nil, false, err
	}
	f, err := manifest.ReadInfo(ctx, st.Bucket(), st.KeyPrefix(), info)
	if err != nil {
		return nil, false, err
	}
	if err := flags.CheckRead(f.Manifest.GetReaderFeatureFlags(), f.Manifest.GetWriterFeatureFlags()); err != nil {
		return nil, false, err
	}
	if HasZoneWriteSeeds(f.Manifest) {
		return nil, true, nil
	}
	res, err = Commit(ctx, st, NewEnableZoneWriteSeeds(info.Version), opts)
	if err != nil {
		return nil, false, err
	}
	return res, false, nil
}
