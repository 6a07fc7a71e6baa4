package awsapi

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/ecr"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
)

// ECRAPI is the part of the Amazon ECR API that registry authentication needs.
type ECRAPI interface {
	GetAuthorizationToken(ctx context.Context, in *ecr.GetAuthorizationTokenInput, optFns ...func(*ecr.Options)) (*ecr.GetAuthorizationTokenOutput, error)
}

var _ ECRAPI = (*ecr.Client)(nil)

// ECRClientFactory returns an ECR API client that is correct for reg: its
// region, partition and endpoint variant (FIPS, dual-stack). It is called
// only when a token must be fetched, never on a warm lookup.
type ECRClientFactory func(ctx context.Context, reg ecrhost.Registry) (ECRAPI, error)
