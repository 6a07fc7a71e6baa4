package fakeimds_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"

	"github.com/openshift/hypershift-ecr/testing/fakeimds"
)

// The SDK's own metadata client and instance-role provider, pointed at the
// fake. Through config.LoadDefaultConfig, set the environment variable
// AWS_EC2_METADATA_SERVICE_ENDPOINT to srv.URL instead.
func ExampleIMDS() {
	m := fakeimds.New(fakeimds.WithRegion("eu-west-1"))
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	defer m.Close()
	ctx := context.Background()

	client := imds.New(imds.Options{Endpoint: srv.URL})
	region, err := client.GetRegion(ctx, &imds.GetRegionInput{})
	if err != nil {
		panic(err)
	}
	creds, err := ec2rolecreds.New(func(o *ec2rolecreds.Options) { o.Client = client }).Retrieve(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(region.Region)
	fmt.Println(creds.AccessKeyID == fakeimds.AccessKeyID(1))
	fmt.Println("token PUTs:", m.Calls(fakeimds.TokenPath))
	// Output:
	// eu-west-1
	// true
	// token PUTs: 1
}
