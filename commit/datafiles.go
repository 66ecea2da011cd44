package commit

import (
	"fmt"

	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// Rules on the data files a transaction adds: their file version against
// the table's data storage version (§3.4, §5.2 e) and their field ids
// against the schema.

// fileVersion maps a DataFile's (major, minor) to the data storage version
// string (§3.4).
func fileVersion(major, minor uint32) string {
	switch {
	case major == 0 && minor <= 2:
		return "0.1"
	case major == 0 && minor == 3:
		return "2.0"
	case major == 2:
		return fmt.Sprintf("2.%d", minor)
	}
	return fmt.Sprintf("%d.%d", major, minor)
}

// DataFormatVersion returns the table's data storage version: data_format
// when present, else inferred from the data files, else from the
// deprecated writer bit 2 (§9 trap 11).
func DataFormatVersion(m *pb.Manifest) string {
	if v := m.GetDataFormat().GetVersion(); v != "" {
		return v
	}
	for _, f := range m.GetFragments() {
		for _, df := range f.GetFiles() {
			return fileVersion(df.GetFileMajorVersion(), df.GetFileMinorVersion())
		}
	}
	if m.GetWriterFeatureFlags()&flags.UseV2FormatDeprecated != 0 {
		return "2.0"
	}
	return "0.1"
}

// checkFileVersions refuses data files whose version differs from the
// table's data storage version, unless the table allows mixed versions
// (bit 8) (§5.2 e).
func checkFileVersions(m *pb.Manifest, frags []*pb.DataFragment) error {
	if m.GetReaderFeatureFlags()&flags.MixedDataFileVersions != 0 {
		return nil
	}
	want := DataFormatVersion(m)
	for _, f := range frags {
		for _, df := range f.GetFiles() {
			if got := fileVersion(df.GetFileMajorVersion(), df.GetFileMinorVersion()); got != want {
				return fmt.Errorf("%w: data file %s has file version %s but the dataset's data storage version is %s (mixing versions needs flag MIXED_DATA_FILE_VERSIONS)",
					ErrInvalidTransaction, df.GetPath(), got, want)
			}
		}
	}
	return nil
}

// checkFieldIDs refuses data files that store field ids the schema lacks.
func checkFieldIDs(fields []*pb.Field, frags []*pb.DataFragment) error {
	ids := map[int32]bool{}
	for _, f := range fields {
		ids[f.GetId()] = true
	}
	for _, f := range frags {
		for _, df := range f.GetFiles() {
			if len(df.GetColumnIndices()) != 0 && len(df.GetColumnIndices()) != len(df.GetFields()) {
				return fmt.Errorf("%w: data file %s has %d fields but %d column indices", ErrInvalidTransaction, df.GetPath(), len(df.GetFields()), len(df.GetColumnIndices()))
			}
			for _, id := range df.GetFields() {
				if id < 0 {
					continue
				}
				if !ids[id] {
					return fmt.Errorf("%w: data file %s stores field id %d, which is not in the dataset schema", ErrInvalidTransaction, df.GetPath(), id)
				}
			}
		}
	}
	return nil
}
