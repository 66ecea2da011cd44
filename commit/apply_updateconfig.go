package commit

import (
	"fmt"
	"sort"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// applyUpdateConfig applies both the current (6–9) and the deprecated
// (1–4) forms of UpdateConfig to the manifest (§3.7, §5.5).
func applyUpdateConfig(b *builder, uc *pb.Transaction_UpdateConfig) error {
	m := b.m
	// Deprecated forms.
	if len(uc.GetUpsertValues()) > 0 || len(uc.GetDeleteKeys()) > 0 {
		if m.Config == nil {
			m.Config = map[string]string{}
		}
		for k, v := range uc.GetUpsertValues() {
			m.Config[k] = v
		}
		for _, k := range uc.GetDeleteKeys() {
			delete(m.Config, k)
		}
	}
	if len(uc.GetSchemaMetadata()) > 0 {
		m.SchemaMetadata = map[string][]byte{}
		for k, v := range uc.GetSchemaMetadata() {
			m.SchemaMetadata[k] = []byte(v)
		}
	}
	byID := map[int32]*pb.Field{}
	for _, f := range m.GetFields() {
		byID[f.GetId()] = f
	}
	for id, fm := range uc.GetFieldMetadata() {
		f := byID[int32(id)]
		if f == nil || id > 0x7FFFFFFF {
			return fmt.Errorf("%w: UpdateConfig changes the metadata of field %d, which is not in the schema", ErrInvalidTransaction, id)
		}
		// The deprecated form replaces the whole map: it must restate every
		// primary-key key unchanged.
		replace := &pb.Transaction_UpdateMap{Replace: true}
		for k, v := range fm.GetMetadata() {
			v := v
			replace.UpdateEntries = append(replace.UpdateEntries, &pb.Transaction_UpdateMapEntry{Key: k, Value: &v})
		}
		if err := checkPrimaryKeyKept(f, replace); err != nil {
			return err
		}
		f.Metadata = map[string][]byte{}
		for k, v := range fm.GetMetadata() {
			f.Metadata[k] = []byte(v)
		}
	}
	// Current forms.
	m.Config = applyUpdateMap(m.Config, uc.GetConfigUpdates())
	m.TableMetadata = applyUpdateMap(m.TableMetadata, uc.GetTableMetadataUpdates())
	m.SchemaMetadata = applyUpdateMapBytes(m.SchemaMetadata, uc.GetSchemaMetadataUpdates())
	ids := make([]int32, 0, len(uc.GetFieldMetadataUpdates()))
	for id := range uc.GetFieldMetadataUpdates() {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		u := uc.GetFieldMetadataUpdates()[id]
		f := byID[id]
		if f == nil {
			return fmt.Errorf("%w: UpdateConfig changes the metadata of field %d, which is not in the schema", ErrInvalidTransaction, id)
		}
		if err := checkPrimaryKeyKept(f, u); err != nil {
			return err
		}
		f.Metadata = applyUpdateMapBytes(f.Metadata, u)
	}
	return nil
}
