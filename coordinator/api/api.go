package api

import (
	"encoding/json"
	"time"
)

// Endpoint paths. {dataset} is one path segment: a dataset name whose '/'
// are sent as %2F. Every /v1 endpoint takes an optional ?root=NAME query
// parameter (the commit endpoint a "root" body field instead); without it
// the server's default root is used.
const (
	PathCommit      = "/v1/commit"                          // POST CommitRequest → CommitResponse
	PathRoots       = "/v1/roots"                           // GET → RootsResponse
	PathDataset     = "/v1/datasets/{dataset}"              // GET → DatasetSummary
	PathVersions    = "/v1/datasets/{dataset}/versions"     // GET → VersionsResponse
	PathTags        = "/v1/datasets/{dataset}/tags"         // GET → TagsResponse; POST CreateTagRequest → Tag
	PathTag         = "/v1/datasets/{dataset}/tags/{tag}"   // DELETE → 204
	PathEnableSeeds = "/v1/datasets/{dataset}/seeds/enable" // POST EnableSeedsRequest → CommitResponse
	PathHealth      = "/healthz"                            // GET → Health
	PathMetrics     = "/metrics"                            // GET → Prometheus text format
)

// HeaderRequestID carries a request id; the server generates one when the
// client sends none and echoes it on the response and in its logs.
const HeaderRequestID = "X-Request-Id"

// Requirement types.
const (
	// RequireLatestVersion: the commit fails with requirement_failed unless
	// the dataset's latest version is still Version (0: the dataset must not
	// exist yet).
	RequireLatestVersion = "latest_version"
	// RequireDataFilesAbsent: the commit fails with requirement_failed if any
	// data file the operation adds is already referenced by the latest
	// version. It makes resending an Append after an unknown outcome (a
	// timeout, a dropped connection) safe: the second attempt is refused
	// instead of committing the same files twice.
	RequireDataFilesAbsent = "data_files_absent"
)

// Requirement is an assumption about the latest version that must hold
// when the commit is published; it is checked on every attempt.
type Requirement struct {
	Type    string `json:"type"`
	Version uint64 `json:"version,omitempty"`
}

// CommitRequest is the body of POST /v1/commit.
type CommitRequest struct {
	// Dataset is the dataset's name relative to the root (see
	// ValidateDatasetName).
	Dataset string `json:"dataset"`
	// Root names the configured root; "" is the server's default root.
	Root string `json:"root,omitempty"`
	// ReadVersion is the version the operation was built against; every
	// version committed after it is checked against the conflict matrix.
	// 0 only for an Overwrite that creates the dataset.
	ReadVersion  uint64        `json:"read_version"`
	Requirements []Requirement `json:"requirements,omitempty"`
	Operation    Operation     `json:"operation"`
	// AllowBatching lets the server publish this Append together with other
	// concurrent Appends to the same dataset as one version (group commit).
	// Each caller still gets its own fragment ids; the version is shared.
	AllowBatching bool `json:"allow_batching,omitempty"`
	// EnableZoneWriteSeeds is the explicit opt-in that lets this commit set
	// FLAG_ZONE_WRITE_SEEDS when its new data files carry v1 zone write
	// seeds (zone-seeds.md R54, R56).
	EnableZoneWriteSeeds bool `json:"enable_zone_write_seeds,omitempty"`
	// Properties become the transaction's properties (e.g.
	// "__lance_commit_message"). A commit with properties is never batched.
	Properties map[string]string `json:"properties,omitempty"`
}

// Operation holds exactly one operation.
type Operation struct {
	Append               *AppendOp           `json:"append,omitempty"`
	Overwrite            *OverwriteOp        `json:"overwrite,omitempty"`
	Delete               *DeleteOp           `json:"delete,omitempty"`
	UpdateConfig         *UpdateConfigOp     `json:"update_config,omitempty"`
	CreateIndex          *CreateIndexOp      `json:"create_index,omitempty"`
	DropIndex            *DropIndexOp        `json:"drop_index,omitempty"`
	EnableZoneWriteSeeds *struct{}           `json:"enable_zone_write_seeds,omitempty"`
	Restore              *RestoreOp          `json:"restore,omitempty"`
	ReserveFragments     *ReserveFragmentsOp `json:"reserve_fragments,omitempty"`
}

// Kind returns the name of the operation that is set ("" when none is set
// or more than one is).
func (o Operation) Kind() string {
	kind, n := "", 0
	set := func(ok bool, name string) {
		if ok {
			kind, n = name, n+1
		}
	}
	set(o.Append != nil, "append")
	set(o.Overwrite != nil, "overwrite")
	set(o.Delete != nil, "delete")
	set(o.UpdateConfig != nil, "update_config")
	set(o.CreateIndex != nil, "create_index")
	set(o.DropIndex != nil, "drop_index")
	set(o.EnableZoneWriteSeeds != nil, "enable_zone_write_seeds")
	set(o.Restore != nil, "restore")
	set(o.ReserveFragments != nil, "reserve_fragments")
	if n != 1 {
		return ""
	}
	return kind
}

// AppendOp adds fragments whose data files the client already wrote under
// the dataset's data/ directory. Fragment ids are assigned at commit.
type AppendOp struct {
	// Fragments are protojson lance.table.DataFragment messages.
	Fragments []json.RawMessage `json:"fragments"`
}

// OverwriteOp replaces the table (and creates the dataset when the read
// version is 0).
type OverwriteOp struct {
	Fragments []json.RawMessage `json:"fragments"`
	// Schema is the field list, protojson lance.file.Field messages in
	// pre-order.
	Schema         []json.RawMessage `json:"schema"`
	SchemaMetadata map[string][]byte `json:"schema_metadata,omitempty"`
	ConfigUpserts  map[string]string `json:"config_upserts,omitempty"`
	StableRowIDs   bool              `json:"stable_row_ids,omitempty"`
}

// DeleteOp deletes rows by local row offset. The server reads the
// fragments' deletion vectors at the read version and writes the new
// deletion files.
type DeleteOp struct {
	Fragments []FragmentDeletion `json:"fragments"`
	Predicate string             `json:"predicate,omitempty"`
}

// FragmentDeletion lists the rows to delete from one fragment: single
// offsets and half-open ranges [start, end).
type FragmentDeletion struct {
	ID     uint64      `json:"id"`
	Rows   []uint32    `json:"rows,omitempty"`
	Ranges [][2]uint64 `json:"ranges,omitempty"`
}

// UpdateConfigOp changes table config, table metadata, schema metadata or
// field metadata. A null value deletes the key. Field metadata is keyed by
// the field id in decimal.
type UpdateConfigOp struct {
	Config                map[string]*string            `json:"config,omitempty"`
	ReplaceConfig         bool                          `json:"replace_config,omitempty"`
	TableMetadata         map[string]*string            `json:"table_metadata,omitempty"`
	ReplaceTableMetadata  bool                          `json:"replace_table_metadata,omitempty"`
	SchemaMetadata        map[string]*string            `json:"schema_metadata,omitempty"`
	ReplaceSchemaMetadata bool                          `json:"replace_schema_metadata,omitempty"`
	FieldMetadata         map[string]map[string]*string `json:"field_metadata,omitempty"`
}

// CreateIndexOp adds index segments (protojson lance.table.IndexMetadata,
// index files already written) and removes segments of the read version by
// uuid. With no new indices it is an index drop.
type CreateIndexOp struct {
	NewIndices   []json.RawMessage `json:"new_indices,omitempty"`
	RemovedUUIDs []string          `json:"removed_uuids,omitempty"`
}

// DropIndexOp removes every segment of the named index of the read
// version (a CreateIndex with no new indices).
type DropIndexOp struct {
	Name string `json:"name"`
}

// RestoreOp makes an old version the new head.
type RestoreOp struct {
	Version uint64 `json:"version"`
}

// ReserveFragmentsOp reserves fragment ids.
type ReserveFragmentsOp struct {
	Count uint32 `json:"count"`
}

// CommitResponse describes a committed version.
type CommitResponse struct {
	Dataset     string `json:"dataset"`
	Root        string `json:"root"`
	Version     uint64 `json:"version"`
	ReadVersion uint64 `json:"read_version"`
	// FragmentIDs are the ids given to this request's new fragments, in
	// request order (a batched commit's other fragments are not listed).
	FragmentIDs []uint64 `json:"fragment_ids"`
	// BatchSize is the number of requests published in this version (1
	// unless the commit was batched).
	BatchSize int `json:"batch_size"`
	// Attempts is the number of publication attempts (1 = no race lost).
	Attempts        int    `json:"attempts"`
	ManifestPath    string `json:"manifest_path,omitempty"`
	TransactionFile string `json:"transaction_file,omitempty"`
	// ReaderFeatureFlags and WriterFeatureFlags of the new manifest.
	ReaderFeatureFlags uint64 `json:"reader_feature_flags"`
	WriterFeatureFlags uint64 `json:"writer_feature_flags"`
	ZoneWriteSeeds     bool   `json:"zone_write_seeds"`
	// AlreadyEnabled: an explicit seed activation found both bits set and
	// wrote nothing (Version is then the latest version).
	AlreadyEnabled bool `json:"already_enabled,omitempty"`
	// ReservedFirst..ReservedLast: the ids a ReserveFragments reserved.
	ReservedFirst uint64 `json:"reserved_first,omitempty"`
	ReservedLast  uint64 `json:"reserved_last,omitempty"`
}

// EnableSeedsRequest is the (optional) body of POST .../seeds/enable.
type EnableSeedsRequest struct {
	// ExpectedVersion, when non-zero, is a latest_version requirement.
	ExpectedVersion uint64 `json:"expected_version,omitempty"`
}

// Field is one schema field of a DatasetSummary.
type Field struct {
	ID          int32  `json:"id"`
	ParentID    int32  `json:"parent_id"`
	Name        string `json:"name"`
	LogicalType string `json:"logical_type"`
	Nullable    bool   `json:"nullable"`
}

// Index is one index segment of a DatasetSummary.
type Index struct {
	Name   string  `json:"name"`
	UUID   string  `json:"uuid"`
	Fields []int32 `json:"fields"`
}

// DatasetSummary is the latest version of a dataset and what its manifest
// says.
type DatasetSummary struct {
	Dataset            string            `json:"dataset"`
	Root               string            `json:"root"`
	Version            uint64            `json:"version"`
	ManifestPath       string            `json:"manifest_path"`
	ManifestSize       int64             `json:"manifest_size"`
	Timestamp          *time.Time        `json:"timestamp,omitempty"`
	DataStorageVersion string            `json:"data_storage_version"`
	Fragments          int               `json:"fragments"`
	PhysicalRows       uint64            `json:"physical_rows"`
	DeletedRows        uint64            `json:"deleted_rows"`
	MaxFragmentID      *uint32           `json:"max_fragment_id,omitempty"`
	ReaderFeatureFlags uint64            `json:"reader_feature_flags"`
	WriterFeatureFlags uint64            `json:"writer_feature_flags"`
	FeatureFlagNames   []string          `json:"feature_flag_names"`
	ZoneWriteSeeds     bool              `json:"zone_write_seeds"`
	Fields             []Field           `json:"fields"`
	Config             map[string]string `json:"config"`
	Indices            []Index           `json:"indices"`
	Tag                string            `json:"tag,omitempty"`
	WriterVersion      string            `json:"writer_version,omitempty"`
}

// Version is one entry of VersionsResponse.
type Version struct {
	Version uint64    `json:"version"`
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
}

// VersionsResponse lists versions in ascending order. When more versions
// exist than the limit allowed, NextAfter is the "after" parameter of the
// next page.
type VersionsResponse struct {
	Dataset   string    `json:"dataset"`
	Root      string    `json:"root"`
	Versions  []Version `json:"versions"`
	NextAfter uint64    `json:"next_after,omitempty"`
}

// Tag is a tag of the dataset (§7.1). Branch "" is main.
type Tag struct {
	Name         string            `json:"name"`
	Branch       string            `json:"branch,omitempty"`
	Version      uint64            `json:"version"`
	CreatedAt    *time.Time        `json:"created_at,omitempty"`
	UpdatedAt    *time.Time        `json:"updated_at,omitempty"`
	ManifestSize uint64            `json:"manifest_size"`
	Metadata     map[string]string `json:"metadata"`
}

// TagsResponse lists the tags sorted by name.
type TagsResponse struct {
	Tags []Tag `json:"tags"`
}

// CreateTagRequest creates a tag on a version of main (Version 0: the
// latest).
type CreateTagRequest struct {
	Name     string            `json:"name"`
	Version  uint64            `json:"version,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// RootInfo describes a configured root. URL is the root as the server
// opens it (user info redacted; a local directory as an absolute path), so
// a client can check that it writes data files to the same place.
type RootInfo struct {
	Name         string `json:"name"`
	URL          string `json:"url"`
	Kind         string `json:"kind"`
	Default      bool   `json:"default"`
	AtomicCreate bool   `json:"atomic_create"`
}

// RootsResponse lists the configured roots, the default one first.
type RootsResponse struct {
	Roots []RootInfo `json:"roots"`
}

// Health is the body of GET /healthz.
type Health struct {
	Status string `json:"status"` // "ok" or "draining"
}
