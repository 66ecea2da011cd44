package commit

import (
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// dictionaryPrelude returns the bytes the manifest m must be written with
// before its sections (manifest.EncodePrelude). Legacy-storage tables (data
// format 0.1) keep the values of dictionary fields in the manifest file,
// before the first section, and Field.dictionary holds their absolute file
// offset and length (lance-table-format.md §3.6); Lance reads them from
// there. When m still has a field whose dictionary position is the one src
// gave that field and lies inside srcPrelude (the prelude of the file src
// was read from), srcPrelude is carried verbatim: written again at offset 0
// it keeps every such offset valid. Otherwise m needs no prelude and nil is
// returned (current Lance writes empty dictionary messages).
func dictionaryPrelude(m, src *pb.Manifest, srcPrelude []byte) []byte {
	if len(srcPrelude) == 0 || src == nil {
		return nil
	}
	srcDicts := map[int32]*pb.Dictionary{}
	for _, f := range src.GetFields() {
		if d := f.GetDictionary(); d.GetLength() > 0 {
			srcDicts[f.GetId()] = d
		}
	}
	for _, f := range m.GetFields() {
		d := f.GetDictionary()
		if d.GetLength() <= 0 || d.GetOffset() < 0 || d.GetOffset() >= int64(len(srcPrelude)) {
			continue
		}
		if sd, ok := srcDicts[f.GetId()]; ok && proto.Equal(sd, d) {
			return srcPrelude
		}
	}
	return nil
}
