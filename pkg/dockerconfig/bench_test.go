package dockerconfig

import (
	_ "embed"
	"encoding/base64"
	"strings"
	"testing"
)

//go:embed testdata/pullsecret-50.json
var pullSecret50 []byte

// ecrToken is shaped like an ECR authorizationToken: base64("AWS:" + ~1.6 KB).
var ecrToken = base64.StdEncoding.EncodeToString([]byte("AWS:" + strings.Repeat("eyJwYXlsb2FkIjoiQUFBQSJ9", 66)))

func BenchmarkParse50(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(pullSecret50)))
	for b.Loop() {
		if _, err := Parse(pullSecret50); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAugmentShape50 is this package's share of registryauth's Augment:
// parse the pull secret, add two ECR registries, serialise.
func BenchmarkAugmentShape50(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(pullSecret50)))
	for b.Loop() {
		c, err := Parse(pullSecret50)
		if err != nil {
			b.Fatal(err)
		}
		if err := c.SetAuth("123456789012.dkr.ecr.us-east-1.amazonaws.com", ecrToken); err != nil {
			b.Fatal(err)
		}
		if err := c.SetAuth("https://123456789012.dkr.ecr.us-west-2.amazonaws.com", ecrToken); err != nil {
			b.Fatal(err)
		}
		_ = c.Marshal()
	}
}

// BenchmarkAugmentShape50EncodingJSON is the same work done with
// encoding/json (the reference parser in reference_test.go), the baseline
// that motivated the scanner.
func BenchmarkAugmentShape50EncodingJSON(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(pullSecret50)))
	for b.Loop() {
		if _, err := refAugment(pullSecret50, "123456789012.dkr.ecr.us-east-1.amazonaws.com", "123456789012.dkr.ecr.us-west-2.amazonaws.com", ecrToken); err != nil {
			b.Fatal(err)
		}
	}
}
