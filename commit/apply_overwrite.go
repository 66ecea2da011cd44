package commit

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// applyOverwrite replaces the schema and every fragment (dropping every
// index); the data storage version follows the new data files, initial
// bases apply only when creating, and fragment ids continue from the
// high-water mark (§5.5 Overwrite, L12).
func applyOverwrite(b *builder, ow *pb.Transaction_Overwrite) error {
	m := b.m
	if len(ow.GetSchema()) == 0 {
		return fmt.Errorf("%w: Overwrite without a schema", ErrInvalidTransaction)
	}
	if err := checkFieldIDs(ow.GetSchema(), ow.GetFragments()); err != nil {
		return err
	}
	m.Fields = cloneFields(ow.GetSchema())
	m.SchemaMetadata = cloneBytesMap(ow.GetSchemaMetadata())
	m.Fragments = nil
	b.indices = nil
	if b.in.prev == nil {
		m.BasePaths = nil
		for _, bp := range ow.GetInitialBases() {
			m.BasePaths = append(m.BasePaths, proto.Clone(bp).(*pb.BasePath))
		}
	}
	if len(ow.GetConfigUpsertValues()) > 0 {
		if m.Config == nil {
			m.Config = map[string]string{}
		}
		for k, v := range ow.GetConfigUpsertValues() {
			m.Config[k] = v
		}
	}
	// The data storage version follows the new data files.
	for _, f := range ow.GetFragments() {
		for _, df := range f.GetFiles() {
			m.DataFormat = &pb.Manifest_DataStorageFormat{FileFormat: "lance", Version: fileVersion(df.GetFileMajorVersion(), df.GetFileMinorVersion())}
			break
		}
		break
	}
	if m.DataFormat == nil {
		m.DataFormat = &pb.Manifest_DataStorageFormat{FileFormat: "lance", Version: "2.0"}
	}
	if b.prevR&flags.MixedDataFileVersions == 0 {
		if err := checkFileVersions(m, ow.GetFragments()); err != nil {
			return err
		}
	}
	// Fragment ids continue from the high-water mark (L12, §5.5).
	ids, err := addFragments(m, b.in.prev, ow.GetFragments(), b.stable)
	if err != nil {
		return err
	}
	b.res.newFragmentIDs = ids
	return nil
}
