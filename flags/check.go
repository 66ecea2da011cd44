package flags

import "math/bits"

// CheckPaired returns a *HalfSetError for the lowest paired bit that is set
// in exactly one of the two words (§6.3: checked on both paths, R59).
func CheckPaired(reader, writer uint64) error {
	diff := (reader ^ writer) & Paired
	if diff == 0 {
		return nil
	}
	bit := uint64(1) << bits.TrailingZeros64(diff)
	return &HalfSetError{Bit: bit, Reader: reader, Writer: writer}
}

// CheckRead refuses a dataset that this build must not read: first a
// half-set paired bit, then any unsupported bit of the reader word.
func CheckRead(reader, writer uint64) error {
	if err := CheckPaired(reader, writer); err != nil {
		return err
	}
	if u := Unsupported(reader); u != 0 {
		return &UnsupportedError{Access: Read, Flags: reader, Unknown: u}
	}
	return nil
}

// CheckWrite refuses a dataset that this build must not write: first a
// half-set paired bit, then any unsupported bit of the writer word.
func CheckWrite(reader, writer uint64) error {
	if err := CheckPaired(reader, writer); err != nil {
		return err
	}
	if u := Unsupported(writer); u != 0 {
		return &UnsupportedError{Access: Write, Flags: writer, Unknown: u}
	}
	return nil
}
