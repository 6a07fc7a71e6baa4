package ecrhost_test

import (
	"fmt"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
)

func ExampleParse() {
	r, ok := ecrhost.Parse("123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com/team/app:v1")
	fmt.Println(ok, r.AccountID, r.Region, r.Partition, r.FIPS)

	r, ok = ecrhost.Parse("HTTPS://123456789012.DKR-ECR.EU-WEST-1.ON.AWS/v2/")
	fmt.Println(ok, r.Host, r.DualStack)

	_, ok = ecrhost.Parse("123456789012.dkr.ecr.us-east-1.amazonaws.com.attacker.example/team/app")
	fmt.Println(ok)
	// Output:
	// true 123456789012 us-gov-west-1 aws-us-gov true
	// true 123456789012.dkr-ecr.eu-west-1.on.aws true
	// false
}

func ExampleMatchImages() {
	for _, glob := range ecrhost.MatchImages() {
		fmt.Println(glob)
	}
	// Output:
	// *.dkr.ecr.*.amazonaws.com
	// *.dkr.ecr-fips.*.amazonaws.com
	// *.dkr-ecr.*.on.aws
	// *.dkr-ecr-fips.*.on.aws
	// *.dkr.ecr.*.amazonaws.com.cn
	// *.dkr-ecr.*.on.amazonwebservices.com.cn
	// *.dkr.ecr.*.amazonaws.eu
	// *.dkr.ecr.*.c2s.ic.gov
	// *.dkr.ecr.*.sc2s.sgov.gov
	// *.dkr.ecr.*.cloud.adc-e.uk
	// *.dkr.ecr.*.csp.hci.ic.gov
	// public.ecr.aws
	// ecr-public.aws.com
}

func ExampleNewParser() {
	p, err := ecrhost.NewParser(ecrhost.Alias{
		Host:      "registry.example.com",
		AccountID: "123456789012",
		Region:    "eu-west-1",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, ok := p.Parse("registry.example.com/team/app:v1")
	fmt.Println(ok, r.Host, r.AccountID, r.Region)

	_, err = ecrhost.NewParser(ecrhost.Alias{Host: "registry.example.com", AccountID: "123", Region: "eu-west-1"})
	fmt.Println(err)
	// Output:
	// true registry.example.com 123456789012 eu-west-1
	// ecrhost: alias 0 (host "registry.example.com"): AccountID must be 12 digits
}
