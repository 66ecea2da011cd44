package main

import (
	"testing"

	"gocloud.dev/blob"
)

// The command links every driver docs/storage.md lists (store/drivers
// tests that opening gs:// and azblob:// URLs reaches the drivers).
func TestCLI_LinksCloudDrivers(t *testing.T) {
	for _, scheme := range []string{"s3", "gs", "azblob", "file", "mem"} {
		if !blob.DefaultURLMux().ValidBucketScheme(scheme) {
			t.Errorf("lancekeeper does not link the %s:// driver", scheme)
		}
	}
}
