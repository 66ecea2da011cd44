package datafile

import (
	"encoding/binary"
	"fmt"
)

// FooterSize is the size of the footer of a Lance v2 file.
const FooterSize = 40

// magic is the last four bytes of every Lance file.
const magic = "LANC"

// FileVersion is the storage version of a Lance v2 data file, numbered the way
// a table manifest records it (DataFile.file_major_version/minor_version and
// Manifest.data_format.version): 2.0, 2.1, 2.2, 2.3.
type FileVersion uint8

// The known v2 storage versions.
const (
	V2_0 FileVersion = iota + 1 // footer (0,3); manifest (2,0)
	V2_1                        // footer (2,1)
	V2_2                        // footer (2,2)
	V2_3                        // footer (2,3); unstable in Lance 12
)

// Major is the manifest's file_major_version for v.
func (v FileVersion) Major() uint32 {
	if v == 0 || v == V0_1 {
		return 0
	}
	return 2
}

// Minor is the manifest's file_minor_version for v.
func (v FileVersion) Minor() uint32 {
	switch v {
	case V2_1:
		return 1
	case V2_2:
		return 2
	case V2_3:
		return 3
	}
	return 0
}

// Unstable reports whether Lance considers v an unstable storage version.
func (v FileVersion) Unstable() bool { return v == V2_3 }

// String gives the version as Manifest.data_format.version spells it ("2.0").
func (v FileVersion) String() string {
	if v == V0_1 {
		return "0.1"
	}
	if v < V2_0 || v > V2_3 {
		return fmt.Sprintf("FileVersion(%d)", uint8(v))
	}
	return fmt.Sprintf("%d.%d", v.Major(), v.Minor())
}

// FooterVersion is the (major, minor) pair a writer of v puts in the footer:
// (0,3) for 2.0, (2,n) otherwise.
func (v FileVersion) FooterVersion() (major, minor uint16) {
	if v == V2_0 {
		return 0, 3
	}
	return uint16(v.Major()), uint16(v.Minor())
}

// versionFromFooter classifies a footer version (spec §1.5). It returns a
// *LegacyFileError for v1 files and a *VersionError for unknown versions.
func versionFromFooter(major, minor uint16) (FileVersion, error) {
	switch {
	case major == 0 && minor <= 2:
		return 0, &LegacyFileError{Major: major, Minor: minor}
	case major == 0 && minor == 3, major == 2 && minor == 0:
		return V2_0, nil
	case major == 2 && minor == 1:
		return V2_1, nil
	case major == 2 && minor == 2:
		return V2_2, nil
	case major == 2 && minor == 3:
		return V2_3, nil
	}
	return 0, &VersionError{Major: major, Minor: minor}
}

// Footer is the decoded 40-byte footer of a Lance v2 file (spec §1.2).
type Footer struct {
	ColumnMetaStart  uint64 // position of column metadata block 0
	CMOStart         uint64 // position of the column metadata offset table
	GBOStart         uint64 // position of the global buffer offset table
	NumGlobalBuffers uint32
	NumColumns       uint32
	Major, Minor     uint16
}

// parseFooter decodes the footer from the last FooterSize bytes of a file of
// the given size. b must hold exactly those bytes.
func parseFooter(b []byte, size int64) (Footer, error) {
	off := size - FooterSize
	if len(b) != FooterSize {
		return Footer{}, formatErr(ErrTruncated, "footer", off, "need %d bytes, have %d", FooterSize, len(b))
	}
	if string(b[36:40]) != magic {
		return Footer{}, formatErr(ErrNotLance, "footer", size-4, "magic is %q, want %q", b[36:40], magic)
	}
	return Footer{
		ColumnMetaStart:  binary.LittleEndian.Uint64(b[0:]),
		CMOStart:         binary.LittleEndian.Uint64(b[8:]),
		GBOStart:         binary.LittleEndian.Uint64(b[16:]),
		NumGlobalBuffers: binary.LittleEndian.Uint32(b[24:]),
		NumColumns:       binary.LittleEndian.Uint32(b[28:]),
		Major:            binary.LittleEndian.Uint16(b[32:]),
		Minor:            binary.LittleEndian.Uint16(b[34:]),
	}, nil
}

func (f Footer) appendTo(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, f.ColumnMetaStart)
	b = binary.LittleEndian.AppendUint64(b, f.CMOStart)
	b = binary.LittleEndian.AppendUint64(b, f.GBOStart)
	b = binary.LittleEndian.AppendUint32(b, f.NumGlobalBuffers)
	b = binary.LittleEndian.AppendUint32(b, f.NumColumns)
	b = binary.LittleEndian.AppendUint16(b, f.Major)
	b = binary.LittleEndian.AppendUint16(b, f.Minor)
	return append(b, magic...)
}

// checkLayout applies the footer-level rules of spec §1.6 (steps 3 and 6 and
// the SHOULD checks after the table).
func (f Footer) checkLayout(size int64) error {
	const sec = "footer"
	foot := size - FooterSize
	usize := uint64(foot)
	if f.NumGlobalBuffers == 0 {
		return formatErr(ErrMalformed, sec, foot+24, "num_global_buffers is 0; global buffer 0 (the schema) is required")
	}
	if f.ColumnMetaStart > f.CMOStart || f.CMOStart > f.GBOStart {
		return formatErr(ErrMalformed, sec, foot, "column_meta_start %d, cmo_start %d, gbo_start %d are not in increasing order",
			f.ColumnMetaStart, f.CMOStart, f.GBOStart)
	}
	if f.GBOStart > usize {
		return formatErr(ErrTruncated, sec, foot+16, "gbo_start %d is past the footer at %d", f.GBOStart, usize)
	}
	cmoLen := 16 * uint64(f.NumColumns) // cannot overflow: NumColumns < 2^32
	if f.GBOStart-f.CMOStart != cmoLen {
		return formatErr(ErrMalformed, sec, foot+8, "CMO table [%d, %d) holds %d bytes, want 16 x %d columns = %d",
			f.CMOStart, f.GBOStart, f.GBOStart-f.CMOStart, f.NumColumns, cmoLen)
	}
	gboLen := 16 * uint64(f.NumGlobalBuffers)
	if usize-f.GBOStart != gboLen {
		return formatErr(ErrMalformed, sec, foot+16, "GBO table [%d, %d) holds %d bytes, want 16 x %d global buffers = %d",
			f.GBOStart, usize, usize-f.GBOStart, f.NumGlobalBuffers, gboLen)
	}
	return nil
}
