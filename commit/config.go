package commit

import (
	"fmt"
	"strings"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// Config and metadata rules (lance-table-format.md §3.7, §5.5
// UpdateConfig): UpdateMap semantics for config, table, schema and field
// metadata, and the immutability of primary-key field metadata.

// applyUpdateMap applies an UpdateMap (§3.7): replace clears the target
// first; entries with a value are upserted, entries without one deleted.
func applyUpdateMap(dst map[string]string, u *pb.Transaction_UpdateMap) map[string]string {
	if u == nil {
		return dst
	}
	if u.GetReplace() || dst == nil {
		dst = map[string]string{}
	}
	for _, e := range u.GetUpdateEntries() {
		if e.Value != nil {
			dst[e.GetKey()] = e.GetValue()
		} else {
			delete(dst, e.GetKey())
		}
	}
	if len(dst) == 0 {
		return nil
	}
	return dst
}

func applyUpdateMapBytes(dst map[string][]byte, u *pb.Transaction_UpdateMap) map[string][]byte {
	if u == nil {
		return dst
	}
	if u.GetReplace() || dst == nil {
		old := dst
		dst = map[string][]byte{}
		if !u.GetReplace() {
			for k, v := range old {
				dst[k] = v
			}
		}
	}
	for _, e := range u.GetUpdateEntries() {
		if e.Value != nil {
			dst[e.GetKey()] = []byte(e.GetValue())
		} else {
			delete(dst, e.GetKey())
		}
	}
	if len(dst) == 0 {
		return nil
	}
	return dst
}

// primaryKeyMetadata is the field-metadata key prefix Lance treats as
// immutable once set (§5.5 UpdateConfig).
const primaryKeyMetadata = "lance-schema:unenforced-primary-key"

func hasPrimaryKeyMetadata(f *pb.Field) bool {
	for k := range f.GetMetadata() {
		if strings.HasPrefix(k, primaryKeyMetadata) {
			return true
		}
	}
	return false
}

// checkPrimaryKeyKept refuses an update that would change or remove a
// primary-key metadata key that is already set.
func checkPrimaryKeyKept(f *pb.Field, u *pb.Transaction_UpdateMap) error {
	if !hasPrimaryKeyMetadata(f) {
		return nil
	}
	for k, v := range f.GetMetadata() {
		if !strings.HasPrefix(k, primaryKeyMetadata) {
			continue
		}
		if u.GetReplace() {
			kept := false
			for _, e := range u.GetUpdateEntries() {
				if e.GetKey() == k && e.Value != nil && e.GetValue() == string(v) {
					kept = true
				}
			}
			if !kept {
				return fmt.Errorf("%w: field %q (id %d): primary-key metadata %q cannot be changed once set", ErrInvalidTransaction, f.GetName(), f.GetId(), k)
			}
			continue
		}
		for _, e := range u.GetUpdateEntries() {
			if e.GetKey() == k && (e.Value == nil || e.GetValue() != string(v)) {
				return fmt.Errorf("%w: field %q (id %d): primary-key metadata %q cannot be changed once set", ErrInvalidTransaction, f.GetName(), f.GetId(), k)
			}
		}
	}
	return nil
}
