package manifest

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// EncodeHint returns the exact bytes Lance writes to
// _versions/latest_version_hint.json: compact JSON, no trailing newline
// (lance-table-format.md §4.5).
func EncodeHint(version uint64) []byte {
	return []byte(`{"version":` + strconv.FormatUint(version, 10) + `}`)
}

// DecodeHint parses a latest-version hint. It accepts any JSON object whose
// "version" member is a non-negative integer (other members and whitespace
// are ignored). name is used in error messages. The hint is only an
// optimisation; callers fall back to listing on any error.
func DecodeHint(name string, data []byte) (uint64, error) {
	var h struct {
		Version json.RawMessage `json:"version"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&h); err != nil {
		return 0, &FormatError{File: name, Offset: dec.InputOffset(), Reason: "invalid version hint JSON", Err: err}
	}
	if len(h.Version) == 0 {
		return 0, formatErr(name, 0, `version hint has no "version" member`)
	}
	v, err := strconv.ParseUint(string(h.Version), 10, 64)
	if err != nil {
		return 0, formatErr(name, 0, "version hint %s is not a u64", h.Version)
	}
	return v, nil
}
