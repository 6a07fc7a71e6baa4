// Package fakeimds is an in-process fake of the EC2 Instance Metadata
// Service (IMDSv2) for tests that exercise the AWS SDK's instance-role
// path: region from the instance identity document, credentials from the
// instance profile's role.
//
// Serve Handler with httptest and point the SDK at it with the environment
// variable AWS_EC2_METADATA_SERVICE_ENDPOINT (or imds.Options.Endpoint).
// config.LoadDefaultConfig with config.WithEC2IMDSRegion then reads the
// region from the identity document, and its credential chain, finding no
// environment keys, shared files, web identity or container credentials,
// falls through to the role served here.
//
// By default IMDSv2 is enforced, as on instances launched with
// HttpTokens=required (the OpenShift default): a GET without a valid
// session token from PUT /latest/api/token is refused with 401. WithIMDSv1
// relaxes that. The role's key pairs rotate: a new pair every half
// credential lifetime (WithCredentialLifetime, 6h by default), each valid
// for the full lifetime; AccessKeyID, SecretAccessKey and SessionToken
// predict the nth pair, so a test can require the fake ECR to see exactly
// the role's key (fakeecr.WithRequiredAccessKeyID). WithClock drives
// rotation and expiry.
//
// Faults model what breaks the instance-role path in real clusters.
// WithHopLimitExceeded holds every token PUT without an answer until the
// client gives up, as a pod sees IMDS when the instance's PUT response hop
// limit is 1; WithUnavailable drops every connection, as off EC2;
// WithLatency slows every answer. Calls counts requests per path, so a test
// can assert that a cache spared the metadata service.
//
// All methods are safe for concurrent use. Call Close before closing the
// server when a fault holds requests.
package fakeimds
