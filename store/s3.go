package store

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"
)

// openS3 opens an s3:// bucket with the query parameters of gocloud's
// s3blob URL opener (gocloud.dev v0.49: ssetype, kmskeyid, accelerate,
// disable_https, use_path_style / s3ForcePathStyle, and everything
// gocloud.dev/aws.V2ConfigFromURLParams takes), building the client itself
// for two reasons:
//
//   - The SDK logs "Response has no supported checksum. Not validating
//     response payload." to stderr for every GET whose response carries no
//     checksum header, which S3-compatible servers (SeaweedFS among them)
//     never send: one line per range read, in every command's output. The
//     client here switches that log line off (validation itself is
//     unchanged: responses that carry a checksum are still validated).
//   - The URL opener gocloud registers is one shared value whose Options
//     keep the ssetype and kmskeyid of one URL for every later Open in the
//     process; here each Open starts from its own options.
func openS3(ctx context.Context, bucket string, q url.Values) (*blob.Bucket, error) {
	q = cloneValues(q)
	var bopts s3blob.Options
	if v := q.Get("ssetype"); v != "" {
		q.Del("ssetype")
		found := false
		for _, t := range types.ServerSideEncryptionAes256.Values() {
			if strings.EqualFold(string(t), v) {
				bopts.EncryptionType, found = t, true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("%q is not a valid value for %q", v, "ssetype")
		}
	}
	if v := q.Get("kmskeyid"); v != "" {
		q.Del("kmskeyid")
		bopts.KMSEncryptionID = v
	}
	var copts []func(*s3.Options)
	boolParam := func(key string, set func(o *s3.Options, v bool)) error {
		raw := q.Get(key)
		if raw == "" {
			return nil
		}
		q.Del(key)
		v, err := strconv.ParseBool(raw)
		if err != nil {
			return fmt.Errorf("invalid value for %q: %w", key, err)
		}
		copts = append(copts, func(o *s3.Options) { set(o, v) })
		return nil
	}
	for _, p := range []struct {
		key string
		set func(o *s3.Options, v bool)
	}{
		{"accelerate", func(o *s3.Options, v bool) { o.UseAccelerate = v }},
		{"disable_https", func(o *s3.Options, v bool) { o.EndpointOptions.DisableHTTPS = v }},
		{"use_path_style", func(o *s3.Options, v bool) { o.UsePathStyle = v }},
		{"s3ForcePathStyle", func(o *s3.Options, v bool) { o.UsePathStyle = v }}, // legacy spelling
	} {
		if err := boolParam(p.key, p.set); err != nil {
			return nil, err
		}
	}
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil {
		return nil, err
	}
	copts = append(copts, func(o *s3.Options) { o.DisableLogOutputChecksumValidationSkipped = true })
	client := s3.NewFromConfig(cfg, copts...)
	// The upload manager takes the request checksum setting from here.
	bopts.RequestChecksumCalculation = cfg.RequestChecksumCalculation
	return s3blob.OpenBucket(ctx, client, bucket, &bopts)
}

func cloneValues(q url.Values) url.Values {
	out := make(url.Values, len(q))
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	return out
}
