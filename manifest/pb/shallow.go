package pb

// This file is written by hand (go generate leaves it alone).

// ShallowCopy returns a new Manifest holding x's field values: the same
// slices, maps and messages (fields, fragments, config, timestamp, …) and
// unknown bytes, with the optional scalars (index_section,
// max_fragment_id, branch, transaction_section) in pointers of its own.
// Setting a field of the copy leaves x alone; changing a shared slice, map
// or message changes both. It copies the fields one by one, far cheaper
// than protobuf reflection (TestShallowCopy_EveryField keeps the list
// complete when the .proto gains a field).
func (x *Manifest) ShallowCopy() *Manifest {
	c := &Manifest{
		Fields:             x.Fields,
		Fragments:          x.Fragments,
		Version:            x.Version,
		VersionAuxData:     x.VersionAuxData,
		SchemaMetadata:     x.SchemaMetadata,
		IndexSection:       copyPtr(x.IndexSection),
		Timestamp:          x.Timestamp,
		Tag:                x.Tag,
		ReaderFeatureFlags: x.ReaderFeatureFlags,
		WriterFeatureFlags: x.WriterFeatureFlags,
		MaxFragmentId:      copyPtr(x.MaxFragmentId),
		TransactionFile:    x.TransactionFile,
		WriterVersion:      x.WriterVersion,
		NextRowId:          x.NextRowId,
		DataFormat:         x.DataFormat,
		Config:             x.Config,
		BasePaths:          x.BasePaths,
		TableMetadata:      x.TableMetadata,
		Branch:             copyPtr(x.Branch),
		TransactionSection: copyPtr(x.TransactionSection),
	}
	if u := x.ProtoReflect().GetUnknown(); len(u) > 0 {
		c.ProtoReflect().SetUnknown(u)
	}
	return c
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
