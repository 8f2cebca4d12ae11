package platform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// Code from S3: CreateFunction's Code, UpdateFunctionCode's and PublishLayerVersion's Content
// may name an object (S3Bucket, S3Key, S3ObjectVersion) instead of carrying the zip, which is
// how deploy tools (SAM, Serverless, Terraform with s3_bucket) upload anything large. The
// platform reads the object from the S3 endpoint it was started with (--s3-endpoint; faascope
// passes its local S3 stand-in's) and streams it into the staging directory, as an inline zip
// is streamed: never whole in memory, then checked as any package (checkPackage).
//
// The client is the AWS SDK for Go v2, already a dependency of this module (the agent's S3
// workloads use it): it signs SigV4 as any S3 server expects, follows S3's error shapes (so
// NoSuchKey comes back as a code, not a guess from a status) and is pure Go, so the platform
// binary stays static.

// S3Config is where the platform reads code from S3; Endpoint "" = nowhere (refused).
type S3Config struct {
	Endpoint        string // e.g. http://127.0.0.1:7070 (path-style addressing)
	Region          string // signing region; us-east-1 when empty
	AccessKeyID     string // empty: anonymous requests
	SecretAccessKey string
}

// maxS3PackageBytes bounds a package read from S3. Lambda's 50 MB zipped limit is for direct
// uploads only ("Upload larger files with Amazon S3"); from S3 the limit is the 250 MB unzipped
// one, which a zip cannot usefully exceed, so it bounds the object too.
const maxS3PackageBytes = maxUnzippedBytes

// s3FetchTimeout bounds reading one package from S3 (the same as a request body's total).
var s3FetchTimeout = 5 * time.Minute

type s3Source struct {
	client   *s3.Client
	endpoint string
}

func newS3Source(c S3Config) (*s3Source, error) {
	if c.Endpoint == "" {
		return nil, nil
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("endpoint %q must be an http:// or https:// URL", c.Endpoint)
	}
	region := c.Region
	if region == "" {
		region = "us-east-1"
	}
	opts := s3.Options{
		Region: region, BaseEndpoint: aws.String(c.Endpoint), UsePathStyle: true,
		// Checksums only where S3 requires them: stand-ins do not all speak the newer ones.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if c.AccessKeyID != "" {
		creds := aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, Source: "faascope-platform"}
		opts.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return creds, nil })
	} else {
		opts.Credentials = aws.AnonymousCredentials{}
	}
	return &s3Source{client: s3.New(opts), endpoint: c.Endpoint}, nil
}

// codeLocation is a code request's package: inline (ZipFile, streamed by readCodeRequest and so
// left empty here) or in S3.
type codeLocation struct {
	S3Bucket        string `json:"S3Bucket"`
	S3Key           string `json:"S3Key"`
	S3ObjectVersion string `json:"S3ObjectVersion"`
	ImageUri        string `json:"ImageUri"`
}

// s3Object is a package to be read from S3 when the store stages it (store.stage).
type s3Object struct {
	ctx                  context.Context
	src                  *s3Source
	bucket, key, version string
}

// Read makes an s3Object an io.Reader, as the core's package inputs are; the store never reads
// it (it fetches it into a staging file).
func (o *s3Object) Read([]byte) (int, error) {
	return 0, errors.New("an S3 package is staged by the store, not read")
}

// codeOf is a code request's package: the inline zip, or the S3 object loc names. field names
// the request's package field ("Code", "Content") in errors.
func (p *Platform) codeOf(ctx context.Context, zip *upload, loc codeLocation, field string) (io.Reader, error) {
	if loc.ImageUri != "" {
		return nil, errInvalid("%s.ImageUri: this local platform runs .zip packages only", field)
	}
	if loc.S3Bucket == "" && loc.S3Key == "" && loc.S3ObjectVersion == "" {
		if zip == nil || zip.n == 0 {
			return nil, errInvalid("%s: a zip package is required, as ZipFile (base64) or S3Bucket and S3Key", field)
		}
		return zip, nil
	}
	if zip != nil {
		return nil, errInvalid("%s: give either ZipFile or S3Bucket and S3Key, not both", field)
	}
	if loc.S3Bucket == "" || loc.S3Key == "" {
		return nil, errInvalid("%s: S3Bucket and S3Key are both required to read the package from S3", field)
	}
	if p.s3 == nil {
		return nil, errInvalid("%s.S3Bucket: this local platform was started without an S3 endpoint to read code from; "+
			"start it with --s3-endpoint URL (faascope platform start does so when `faascope standins start` runs the S3 stand-in) "+
			"or pass the zip inline as ZipFile", field)
	}
	return &s3Object{ctx: ctx, src: p.s3, bucket: loc.S3Bucket, key: loc.S3Key, version: loc.S3ObjectVersion}, nil
}

// s3Messages are S3's messages for the errors a GetObject of a package meets most.
var s3Messages = map[string]string{
	"NoSuchKey":     "The specified key does not exist.",
	"NoSuchBucket":  "The specified bucket does not exist",
	"NoSuchVersion": "The specified version does not exist.",
	"AccessDenied":  "Access Denied",
}

// fetch streams the object into a staging file of s.
func (o *s3Object) fetch(s functionStore) (*stagedCode, error) {
	ctx, cancel := context.WithTimeout(o.ctx, s3FetchTimeout)
	defer cancel()
	in := &s3.GetObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(o.key)}
	if o.version != "" {
		in.VersionId = aws.String(o.version)
	}
	obj, err := o.src.client.GetObject(ctx, in)
	if err != nil {
		var ae smithy.APIError
		if errors.As(err, &ae) {
			// Lambda's own words for an object it cannot read. The SDK leaves the message of a
			// modelled error (NoSuchKey) empty when it cannot parse it: S3's own words then.
			msg := ae.ErrorMessage()
			if msg == "" {
				msg = s3Messages[ae.ErrorCode()]
			}
			return nil, errInvalid("Error occurred while GetObject. S3 Error Code: %s. S3 Error Message: %s", ae.ErrorCode(), msg)
		}
		return nil, fmt.Errorf("could not read s3://%s/%s from %s: %w", o.bucket, o.key, o.src.endpoint, err)
	}
	defer obj.Body.Close()
	if obj.ContentLength != nil && *obj.ContentLength > maxS3PackageBytes {
		return nil, errUnzippedTooLarge()
	}
	u, err := s.newUpload()
	if err != nil {
		return nil, err
	}
	u.limit, u.tooBig = maxS3PackageBytes, errUnzippedTooLarge()
	if _, err := io.Copy(u, obj.Body); err != nil {
		u.discard()
		var invalid *invalidParameterError
		if errors.As(err, &invalid) {
			return nil, err
		}
		return nil, fmt.Errorf("could not read s3://%s/%s from %s: %w", o.bucket, o.key, o.src.endpoint, err)
	}
	return u.finish()
}
