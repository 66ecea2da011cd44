// Package store is lancekeeper's object-storage layer: reads, range reads,
// listings, puts and an atomic create-if-absent over gocloud.dev/blob, for
// local directories, memory, S3 (and S3-compatible servers), GCS and Azure.
//
// Create-if-absent is the commit point of a Lance commit (a manifest is
// written only if no manifest of that version exists), so every backend states
// how it provides it (see Guarantees):
//
//   - local filesystem: a fully written, fsynced temporary file in the target
//     directory is hard-linked (link(2)) to the final name; link fails with
//     EEXIST if the name exists, which makes the create atomic across
//     processes. gocloud's fileblob IfNotExist is NOT used for this: it is a
//     stat followed by a rename under a process-local mutex, so two
//     processes can both "win".
//   - mem://: memblob checks and inserts under the bucket mutex, which is
//     atomic for every user of that (process-local) bucket.
//   - s3://, gs://, azblob://: a conditional put (S3 and Azure If-None-Match: *,
//     GCS ifGenerationMatch=0) through blob's WriterOptions.IfNotExist; the
//     server's precondition failure is reported as ErrAlreadyExists.
//
// Doctor probes a store URL for these guarantees before anyone trusts it with
// commits.
package store
