package commit

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// commitClone publishes the first manifest of a cloned dataset. It never
// goes through the conflict matrix (§5.4: Clone is only the first commit);
// any existing version, or losing the create race, is ErrDatasetExists.
// The manifest keeps the source's version number and uses V2 naming.
func commitClone(ctx context.Context, d *dataset, t *Transaction, opts Options) (*Result, error) {
	info, err := d.latest(ctx)
	if err != nil {
		return nil, err
	}
	if info.Version != 0 {
		return nil, fmt.Errorf("%w: clone target %s already has version %d", ErrDatasetExists, d.st, info.Version)
	}
	for _, r := range opts.Requirements {
		if err := r.Check(nil); err != nil {
			return nil, err
		}
	}
	in := &buildInput{txn: t.msg, now: opts.Now(), txnFile: t.FileName()}
	res, err := buildClone(t.clone, in)
	if err != nil {
		return nil, err
	}
	if in.version == 0 || in.version&manifest.DetachedBit != 0 {
		return nil, fmt.Errorf("%w: cannot clone source version %d", ErrInvalidTransaction, in.version)
	}
	txnBytes, err := proto.MarshalOptions{Deterministic: true}.Marshal(t.msg)
	if err != nil {
		return nil, err
	}
	if err := d.st.Put(ctx, manifest.TransactionsDir+"/"+in.txnFile, txnBytes); err != nil {
		return nil, fmt.Errorf("write transaction file: %w", err)
	}
	var idx *pb.IndexSection
	if res.indices != nil {
		idx = &pb.IndexSection{Indices: res.indices}
	}
	data, err := manifest.EncodePrelude(dictionaryPrelude(res.manifest, t.clone.Source, t.clone.SourcePrelude), res.manifest, idx, t.msg)
	if err != nil {
		return nil, err
	}
	path := manifest.ManifestPath(manifest.V2, in.version)
	pub, err := publish(ctx, d.st, path, data, nil, nil)
	if err != nil {
		return nil, err
	}
	if !pub.won {
		return nil, fmt.Errorf("%w: another writer created %s first", ErrDatasetExists, d.st)
	}
	out := &Result{
		Version: in.version, ReadVersion: t.ReadVersion(), ManifestPath: path, Manifest: res.manifest,
		Indices: res.indices, TransactionFile: in.txnFile, Transaction: t.Message(), Attempts: 1,
	}
	out.HintError = writeHint(ctx, d.st, opts, in.version)
	return out, nil
}
