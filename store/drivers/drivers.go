// Package drivers links the cloud object-store drivers that the store
// package leaves out because of their size: Google Cloud Storage (gs://,
// gocloud.dev/blob/gcsblob) and Azure Blob Storage (azblob://,
// gocloud.dev/blob/azureblob). Import it for its side effect, in package
// main:
//
//	import _ "github.com/lancekeeper/lancekeeper/store/drivers"
//
// after which store.Open accepts gs:// and azblob:// URLs. The lancekeeper
// command imports it. The drivers read their credentials from the
// environment when a bucket is opened (docs/storage.md).
package drivers

import (
	// Registers azblob:// with blob.DefaultURLMux.
	_ "gocloud.dev/blob/azureblob"
	// Registers gs:// with blob.DefaultURLMux.
	_ "gocloud.dev/blob/gcsblob"
)
