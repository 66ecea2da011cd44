package flags

// Content is what a writer knows about the manifest it is about to write;
// the derived bits are recomputed from it on every commit (§6.2).
type Content struct {
	DeletionFiles         bool // any fragment has a deletion file (bit 0)
	StableRowIDs          bool // any fragment has a row-id sequence, or the table uses stable row ids (bit 1)
	Config                bool // table config is non-empty (bit 3, writer only)
	BasePaths             bool // base_paths is non-empty (bit 4)
	NoTransactionFile     bool // this commit writes no .txn file (bit 5, writer only, per commit)
	CoveringFields        bool // an index of the final list has covering fields (bit 7)
	ReferencesV1Seeds     bool // a data file of the manifest carries a v1 seed (R54)
	ActivateZoneSeeds     bool // an explicit activation commit (R56)
	MixedDataFileVersions bool // the table mixes data-file versions (bit 8)
}

// Derive computes both words from content alone, without any inherited bit.
func Derive(c Content) (reader, writer uint64) {
	if c.DeletionFiles {
		reader |= DeletionFiles
		writer |= DeletionFiles
	}
	if c.StableRowIDs {
		reader |= StableRowIDs
		writer |= StableRowIDs
	}
	if c.Config {
		writer |= TableConfig
	}
	if c.BasePaths {
		reader |= BasePaths
		writer |= BasePaths
	}
	if c.NoTransactionFile {
		writer |= DisableTransactionFile
	}
	if c.CoveringFields {
		reader |= CoveredIndexMetadata
		writer |= CoveredIndexMetadata
	}
	if c.MixedDataFileVersions {
		reader |= MixedDataFileVersions
		writer |= MixedDataFileVersions
	}
	if c.ReferencesV1Seeds || c.ActivateZoneSeeds {
		reader |= ZoneWriteSeeds
		writer |= ZoneWriteSeeds
	}
	return reader, writer
}

// Carry returns the sticky paired bits of a parent manifest, to be OR-ed
// into both words of every manifest derived from it (R57). A parent with a
// half-set pair is corrupt and nothing may be derived from it.
func Carry(parentReader, parentWriter uint64) (uint64, error) {
	if err := CheckPaired(parentReader, parentWriter); err != nil {
		return 0, err
	}
	return parentReader & parentWriter & Sticky, nil
}

// Next computes the flag words of a manifest derived from a parent with the
// given words: derived bits come from content, sticky bits are carried from
// the parent. For a restore, pass the current head's words as the parent and
// the restored manifest's content (§6.5). The result never has a half-set
// pair.
func Next(parentReader, parentWriter uint64, c Content) (reader, writer uint64, err error) {
	sticky, err := Carry(parentReader, parentWriter)
	if err != nil {
		return 0, 0, err
	}
	reader, writer = Derive(c)
	return reader | sticky, writer | sticky, nil
}

// Has reports whether both words carry every bit of mask.
func Has(reader, writer, mask uint64) bool {
	return reader&mask == mask && writer&mask == mask
}
