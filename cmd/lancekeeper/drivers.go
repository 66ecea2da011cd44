package main

// gs:// and azblob:// URLs (the s3 driver is linked by the store package).
import _ "github.com/lancekeeper/lancekeeper/store/drivers"
