package dockerconfig_test

import (
	"errors"
	"fmt"

	"github.com/openshift/hypershift-ecr/pkg/dockerconfig"
)

// Augmenting a pull secret with a fresh ECR token: the stale entry written
// with a scheme is replaced, not duplicated, and every other entry is
// written back as it was.
func Example() {
	pullSecret := []byte(`{"auths":{
		"quay.io":{"auth":"b3BlbnNoaWZ0OnF1YXktdG9rZW4=","email":"someone@example.com"},
		"https://123456789012.dkr.ecr.us-east-1.amazonaws.com":{"auth":"QVdTOm9sZA=="}}}`)

	c, err := dockerconfig.Parse(pullSecret)
	if err != nil {
		panic(err)
	}
	// ECR's authorizationToken is already base64("AWS:<password>").
	if err := c.SetAuth("123456789012.dkr.ecr.us-east-1.amazonaws.com", "QVdTOm5ldw=="); err != nil {
		panic(err)
	}
	fmt.Println(string(c.Marshal()))

	e, _ := c.Lookup("https://123456789012.dkr.ecr.us-east-1.amazonaws.com/")
	fmt.Println(e.Username, e.Password)
	// Output:
	// {"auths":{"123456789012.dkr.ecr.us-east-1.amazonaws.com":{"auth":"QVdTOm5ldw=="},"quay.io":{"auth":"b3BlbnNoaWZ0OnF1YXktdG9rZW4=","email":"someone@example.com"}}}
	// AWS new
}

// Errors say what and where, never what the secret was.
func ExampleParseError() {
	_, err := dockerconfig.Parse([]byte(`{"auths":{"quay.io":{"auth":"c2VjcmV0LXRva2Vu"}}}`))
	var pe *dockerconfig.ParseError
	fmt.Println(errors.Is(err, dockerconfig.ErrMalformed), errors.As(err, &pe), pe.Host)
	fmt.Println(err)
	// Output:
	// true true quay.io
	// dockerconfig: malformed pull secret: entry "quay.io": auth does not decode to username:password (at byte 28)
}

func ExampleNormalizeKey() {
	for _, key := range []string{
		"https://index.docker.io/v1/",
		"https://123456789012.dkr.ecr.us-east-1.amazonaws.com",
		"Quay.IO/OpenShift-Release-Dev/",
	} {
		fmt.Println(dockerconfig.NormalizeKey(key))
	}
	// Output:
	// index.docker.io
	// 123456789012.dkr.ecr.us-east-1.amazonaws.com
	// quay.io/OpenShift-Release-Dev
}

func ExampleMerge() {
	base := []byte(`{"auths":{"quay.io":{"auth":"b3BlbnNoaWZ0OnF1YXktdG9rZW4="},"https://registry.example.com":{"auth":"dTpvbGQ="}},"credsStore":"desktop"}`)
	overlay := []byte(`{"auths":{"registry.example.com":{"auth":"dTpuZXc="}}}`)
	merged, err := dockerconfig.Merge(base, overlay)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(merged))
	// Output:
	// {"auths":{"quay.io":{"auth":"b3BlbnNoaWZ0OnF1YXktdG9rZW4="},"registry.example.com":{"auth":"dTpuZXc="}},"credsStore":"desktop"}
}
