package store

import "fmt"

// Kind names a storage backend.
type Kind string

// Backends.
const (
	KindLocal  Kind = "local"  // local directory, lancekeeper's own link(2) committer
	KindMemory Kind = "memory" // mem://, process-local
	KindS3     Kind = "s3"     // s3:// (AWS S3 and S3-compatible servers)
	KindGCS    Kind = "gcs"    // gs://
	KindAzure  Kind = "azure"  // azblob://
	KindBucket Kind = "bucket" // a caller-supplied *blob.Bucket (see FromBucket)
)

// Guarantees describes what a backend promises. AtomicCreate is the property
// commits depend on: of all concurrent CreateIfAbsent calls on one key, by
// any writer the backend serves, exactly one succeeds.
type Guarantees struct {
	Kind Kind
	// AtomicCreate: create-if-absent is atomic for every writer in Scope.
	AtomicCreate bool
	// CreateMechanism: how create-if-absent is done.
	CreateMechanism string
	// Scope: which writers the atomicity covers.
	Scope string
	// Durability: what is on stable storage when a write returns.
	Durability string
	// Listing: read-after-write behaviour of listings, and their order.
	Listing string
	// Caveats: known ways the guarantee can fail.
	Caveats string
}

func guaranteesFor(k Kind) Guarantees {
	switch k {
	case KindLocal:
		return Guarantees{
			Kind:            k,
			AtomicCreate:    true,
			CreateMechanism: "temp file written and fsynced in the target directory, then link(2) to the final name (EEXIST = already exists), directory fsynced",
			Scope:           "all processes on all hosts that see the directory through a POSIX filesystem with atomic link(2)",
			Durability:      "file and directory fsynced before CreateIfAbsent, Put, Copy and Writer.Close return",
			Listing:         "read-after-write; sorted by key",
			Caveats:         "network filesystems (NFS, SMB, FUSE) were not verified; filesystems without hard links make CreateIfAbsent fail with an error instead of degrading",
		}
	case KindMemory:
		return Guarantees{
			Kind:            k,
			AtomicCreate:    true,
			CreateMechanism: "memblob checks and inserts the key while holding the bucket mutex",
			Scope:           "this process; every Open of mem:// is a new, private bucket",
			Durability:      "none (memory only)",
			Listing:         "read-after-write; sorted by key",
		}
	case KindS3:
		return Guarantees{
			Kind:            k,
			AtomicCreate:    true,
			CreateMechanism: "conditional PUT with If-None-Match: * (412 Precondition Failed = already exists; 409 ConditionalRequestConflict is retried)",
			Scope:           "all clients of the bucket, enforced by the server",
			Durability:      "as the server acknowledges the PUT",
			Listing:         "read-after-write on AWS S3; S3-compatible servers vary (run lancekeeper doctor)",
			Caveats:         "S3-compatible servers have shipped If-None-Match that does not hold under concurrency or is ignored; run lancekeeper doctor against the server first",
		}
	case KindGCS:
		return Guarantees{
			Kind:            k,
			AtomicCreate:    true,
			CreateMechanism: "conditional upload with ifGenerationMatch=0 (412 = already exists)",
			Scope:           "all clients of the bucket, enforced by the server",
			Durability:      "as the server acknowledges the upload",
			Listing:         "read-after-write; sorted by key",
			Caveats:         "not verified against a real GCS bucket by lancekeeper's test suite",
		}
	case KindAzure:
		return Guarantees{
			Kind:            k,
			AtomicCreate:    true,
			CreateMechanism: "upload with If-None-Match: * (BlobAlreadyExists / ConditionNotMet = already exists)",
			Scope:           "all clients of the container, enforced by the server",
			Durability:      "as the server acknowledges the upload",
			Listing:         "read-after-write; sorted by key",
			Caveats:         "not verified against real Azure storage by lancekeeper's test suite",
		}
	}
	return Guarantees{
		Kind:            KindBucket,
		AtomicCreate:    false,
		CreateMechanism: "blob WriterOptions.IfNotExist of an unknown driver (for gocloud's fileblob: a stat followed by a rename under a process-local mutex)",
		Scope:           "unknown; for fileblob only goroutines of one process",
		Durability:      "unknown",
		Listing:         "as the driver provides; sorted by key",
		Caveats:         "two processes can both win a create; not safe for commits",
	}
}

// Guarantees returns what the store's backend promises.
func (s *Store) Guarantees() Guarantees { return s.guar }

// AtomicCreate reports whether CreateIfAbsent is atomic for every writer
// the backend serves, i.e. whether the store is safe for commits.
func (s *Store) AtomicCreate() bool { return s.guar.AtomicCreate }

// RequireAtomicCreate is the commit path's gate: it returns an error wrapping
// ErrNoAtomicCreate when the store cannot create a key atomically, unless
// allowUnsafeCommit is set (the caller explicitly accepts that two concurrent
// commits may both succeed and one of them be lost).
func (s *Store) RequireAtomicCreate(allowUnsafeCommit bool) error {
	if s.guar.AtomicCreate || allowUnsafeCommit {
		return nil
	}
	return fmt.Errorf("store %s (%s): %w: %s; refusing to commit (set AllowUnsafeCommit to accept the risk)",
		s.display, s.guar.Kind, ErrNoAtomicCreate, s.guar.Caveats)
}
