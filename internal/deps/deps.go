package deps
import (
 _ "github.com/apache/arrow-go/v18/arrow"
 _ "github.com/apache/arrow-go/v18/arrow/ipc"
 _ "github.com/apache/arrow-go/v18/parquet/pqarrow"
 _ "github.com/apache/arrow-go/v18/arrow/csv"
 _ "github.com/RoaringBitmap/roaring/v2"
 _ "gocloud.dev/blob"
 _ "gocloud.dev/blob/fileblob"
 _ "gocloud.dev/blob/memblob"
 _ "gocloud.dev/blob/s3blob"
 _ "github.com/google/uuid"
 _ "google.golang.org/protobuf/proto"
 _ "github.com/prometheus/client_golang/prometheus"
 _ "github.com/klauspost/compress/zstd"
 _ "github.com/pierrec/lz4/v4"
)
