package commit

import (
	"slices"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// dedupFieldIDs is the schema fix-up of lance-table-format.md §5.2 e that
// Lance applies to every manifest it commits: old writers (Lance ≈ 0.10,
// see corpus historical/0.10.5/corrupt_schema) could give a new column the
// id of an existing one, so one fragment holds the same field id in two
// data files. Such an id is a duplicate. Each duplicate gets a fresh id
// (the largest id in the schema or any data file, plus one, in increasing
// order of the old ids); in every fragment the occurrence in the newest
// data file (files scanned from last to first) takes the fresh id, and the
// schema field (and its children's parent_id) follows it, so the column
// reads from the newest file as before. Data files left with no field of
// the schema are dropped. Lance 12 produces the same ids and files on the
// same table (TestOldWriterFixup_FieldIDs_5_2e). It reports whether it
// changed m.
func dedupFieldIDs(m *pb.Manifest) bool {
	dup := duplicateFieldIDs(m)
	if len(dup) == 0 {
		return false
	}
	next := int32(-1)
	for _, fl := range m.GetFields() {
		next = max(next, fl.GetId())
	}
	for _, f := range m.GetFragments() {
		for _, df := range f.GetFiles() {
			for _, id := range df.GetFields() {
				next = max(next, id)
			}
		}
	}
	olds := make([]int32, 0, len(dup))
	for id := range dup {
		olds = append(olds, id)
	}
	slices.Sort(olds)
	remap := make(map[int32]int32, len(olds))
	for _, id := range olds {
		next++
		remap[id] = next
	}
	for _, f := range m.GetFragments() {
		done := map[int32]bool{}
		for i := len(f.GetFiles()) - 1; i >= 0; i-- {
			fields := f.GetFiles()[i].Fields
			for j, id := range fields {
				if nid, ok := remap[id]; ok && !done[id] {
					done[id] = true
					fields[j] = nid
				}
			}
		}
	}
	for _, fl := range m.GetFields() {
		if nid, ok := remap[fl.GetId()]; ok {
			fl.Id = nid
		}
	}
	for _, fl := range m.GetFields() {
		if nid, ok := remap[fl.GetParentId()]; ok {
			fl.ParentId = nid
		}
	}
	inSchema := map[int32]bool{}
	for _, fl := range m.GetFields() {
		inSchema[fl.GetId()] = true
	}
	for _, f := range m.GetFragments() {
		f.Files = slices.DeleteFunc(f.Files, func(df *pb.DataFile) bool {
			return !slices.ContainsFunc(df.GetFields(), func(id int32) bool { return inSchema[id] })
		})
	}
	return true
}

// duplicateFieldIDs returns the field ids one fragment of m holds in two
// data files (nil when none): what dedupFieldIDs changes. It only reads m.
func duplicateFieldIDs(m *pb.Manifest) map[int32]bool {
	multi := false
	for _, f := range m.GetFragments() {
		if len(f.GetFiles()) > 1 {
			multi = true
			break
		}
	}
	if !multi {
		return nil
	}
	dup := map[int32]bool{}
	for _, f := range m.GetFragments() {
		seen := map[int32]bool{}
		for _, df := range f.GetFiles() {
			for _, id := range df.GetFields() {
				if id < 0 {
					continue
				}
				if seen[id] {
					dup[id] = true
				}
				seen[id] = true
			}
		}
	}
	return dup
}
